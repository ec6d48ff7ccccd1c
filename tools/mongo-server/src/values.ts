// Two forms of every value. Stored documents keep the exact BSON types the client sent ("typed":
// Int32, Double, Long, Decimal128, BSONRegExp wrappers), so they round-trip unchanged. Mingo only
// understands plain JS values, so matching, sorting, projection, aggregation and update operators run
// on a "view" in which every BSON number is a JS number and BSON regexes are RegExps. MongoDB compares
// numbers by value across types (int32 5 == int64 5 == double 5.0), which is what the view gives.
// ObjectId, Binary, Timestamp and the other wrapper classes stay as they are: mingo compares two
// values of the same class through their toString(), which is correct for them.
import { Decimal128, Double, Int32, Long, ObjectId, BSONRegExp } from 'bson';

export type Doc = Record<string, unknown>;

const bsonType = (v: unknown): string | undefined =>
  v !== null && typeof v === 'object'
    ? ((v as { _bsontype?: string })._bsontype as string | undefined)
    : undefined;

export const isPlainObject = (v: unknown): v is Doc =>
  v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

export function isNumeric(v: unknown): boolean {
  if (typeof v === 'number') return true;
  const t = bsonType(v);
  return t === 'Int32' || t === 'Double' || t === 'Long' || t === 'Decimal128';
}

/** The JS number of a numeric BSON value; undefined if it is not numeric. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  switch (bsonType(v)) {
    case 'Int32':
    case 'Double':
      return (v as Int32 | Double).value;
    case 'Long':
      return (v as Long).toNumber();
    case 'Decimal128':
      return Number.parseFloat((v as Decimal128).toString());
    default:
      return undefined;
  }
}

const JS_FLAGS = new Set(['i', 'm', 's', 'u']);

export function toView(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toView);
  if (isPlainObject(v)) {
    const out: Doc = {};
    for (const k of Object.keys(v)) out[k] = toView(v[k]);
    return out;
  }
  const t = bsonType(v);
  if (t === 'Int32' || t === 'Double' || t === 'Long' || t === 'Decimal128') return toNumber(v);
  if (t === 'BSONRegExp') {
    const re = v as BSONRegExp;
    // 'x' (extended) has no JS equivalent; mongod accepts it, we cannot honour it, so refuse loudly.
    const flags = [...re.options].filter((f) => f !== 'x');
    if (flags.some((f) => !JS_FLAGS.has(f)) || re.options.includes('x')) {
      throw new Error(
        `regular expression option(s) '${re.options}' are not supported by this server`,
      );
    }
    return new RegExp(re.pattern, flags.join(''));
  }
  return v;
}

export const toViewDoc = (d: Doc): Doc => toView(d) as Doc;

/**
 * Give a value computed on the view (by mingo) back its BSON types, taking them from the old typed
 * value at the same place where the number did not change, and following the old type where it did
 * ($inc on an int64 stays int64, as in MongoDB). New integers that leave the int32 range become int64,
 * as MongoDB's arithmetic promotes them.
 */
export function retype(view: unknown, old: unknown): unknown {
  if (typeof view === 'number') {
    if (isNumeric(old) && Object.is(toNumber(old), view)) return old;
    return numberLike(view, old);
  }
  if (view === null || typeof view !== 'object') return view;
  if (Array.isArray(view)) {
    const oldArr = Array.isArray(old) && old.length === view.length ? old : undefined;
    return view.map((x, i) => retype(x, oldArr?.[i]));
  }
  if (isPlainObject(view)) {
    const oldObj = isPlainObject(old) ? old : undefined;
    const out: Doc = {};
    for (const k of Object.keys(view)) out[k] = retype(view[k], oldObj?.[k]);
    return out;
  }
  if (view instanceof RegExp && bsonType(old) === 'BSONRegExp') {
    const o = old as BSONRegExp;
    if (o.pattern === view.source) return old;
  }
  return view;
}

function numberLike(n: number, old: unknown): unknown {
  const t = bsonType(old);
  if (t === 'Long' && Number.isInteger(n)) return Long.fromNumber(n);
  if (t === 'Decimal128') return Decimal128.fromString(String(n));
  if (t === 'Double') return new Double(n);
  if (Number.isInteger(n) && (n > 2147483647 || n < -2147483648) && Number.isSafeInteger(n))
    return Long.fromNumber(n);
  return n;
}

/** Reorders the keys of a projected document (recursively) to follow the stored document's order. */
export function followKeyOrder(projected: unknown, typed: unknown): unknown {
  if (!isPlainObject(projected) || !isPlainObject(typed)) {
    if (Array.isArray(projected) && Array.isArray(typed) && projected.length === typed.length) {
      return projected.map((p, i) => followKeyOrder(p, typed[i]));
    }
    return projected;
  }
  const out: Doc = {};
  for (const k of Object.keys(typed))
    if (k in projected) out[k] = followKeyOrder(projected[k], typed[k]);
  for (const k of Object.keys(projected)) if (!(k in out)) out[k] = projected[k];
  return out;
}

/**
 * A string that is equal for two view values exactly when MongoDB's index considers them equal
 * (numbers by value across types, strings by code points, embedded documents field by field in order).
 */
export function keyOf(v: unknown): string {
  if (v === undefined || v === null) return 'z';
  switch (typeof v) {
    case 'number':
      return Object.is(v, -0) ? 'n0' : `n${v}`;
    case 'string':
      return `s${v}`;
    case 'boolean':
      return v ? 'b1' : 'b0';
    case 'bigint':
      return `n${v}`;
    default:
      break;
  }
  if (v instanceof Date) return `t${v.getTime()}`;
  if (v instanceof RegExp) return `r${v.source}/${v.flags}`;
  if (Array.isArray(v)) return `a[${v.map(keyOf).join(',')}]`;
  if (isPlainObject(v))
    return `o{${Object.keys(v)
      .map((k) => `${JSON.stringify(k)}:${keyOf(v[k])}`)
      .join(',')}}`;
  const t = bsonType(v);
  if (t === 'ObjectId') return `i${(v as ObjectId).toHexString()}`;
  if (t === 'Binary') {
    const b = v as { sub_type: number; buffer: Uint8Array };
    return `x${b.sub_type}:${Buffer.from(b.buffer).toString('base64')}`;
  }
  return `${t ?? 'u'}:${String(v)}`;
}

/** mongod's shell-like rendering of a value in messages such as E11000's `dup key: { ... }`. */
export function formatValue(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (v instanceof RegExp) return String(v);
  if (Array.isArray(v)) return `[ ${v.map(formatValue).join(', ')} ]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    return keys.length ? `{ ${keys.map((k) => `${k}: ${formatValue(v[k])}`).join(', ')} }` : '{}';
  }
  const t = bsonType(v);
  if (t === 'ObjectId') return `ObjectId('${(v as ObjectId).toHexString()}')`;
  if (t === 'Long') return `${(v as Long).toString()}`;
  if (t === 'Int32' || t === 'Double') return String(toNumber(v));
  if (t === 'Decimal128') return `Decimal128("${String(v)}")`;
  return String(v);
}

/** The BSON type name mongod uses in error messages ("string", "int", "object", ...). */
export function typeName(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number')
    return Number.isInteger(v) && Math.abs(v) <= 2147483647 ? 'int' : 'double';
  if (v instanceof Date) return 'date';
  if (v instanceof RegExp) return 'regex';
  if (Array.isArray(v)) return 'array';
  if (isPlainObject(v)) return 'object';
  const t = bsonType(v);
  const names: Record<string, string> = {
    Int32: 'int',
    Double: 'double',
    Long: 'long',
    Decimal128: 'decimal',
    ObjectId: 'objectId',
    Binary: 'binData',
    BSONRegExp: 'regex',
    Timestamp: 'timestamp',
  };
  return (t && names[t]) ?? 'object';
}

/** Reads a numeric command argument, whatever BSON number type the driver used. */
export function num(v: unknown): number | undefined {
  return toNumber(v);
}

/** The values found at a dotted path, descending into arrays as MongoDB's multikey indexes do. */
export function valuesAtPath(doc: unknown, path: string): unknown[] {
  const parts = path.split('.');
  const out: unknown[] = [];
  const walk = (v: unknown, i: number): void => {
    if (i === parts.length) {
      if (Array.isArray(v)) {
        if (v.length === 0) out.push(undefined);
        else for (const e of v) out.push(e);
      } else out.push(v);
      return;
    }
    const part = parts[i] as string;
    if (Array.isArray(v)) {
      if (/^\d+$/.test(part)) {
        walk(v[Number(part)], i + 1);
        return;
      }
      if (v.length === 0) out.push(undefined);
      for (const e of v) walk(e, i);
      return;
    }
    if (isPlainObject(v)) {
      walk(Object.prototype.hasOwnProperty.call(v, part) ? v[part] : undefined, i + 1);
      return;
    }
    out.push(undefined);
  };
  walk(doc, 0);
  return out;
}

/** The value at a dotted path without descending into arrays (undefined when missing). */
export function getPath(doc: unknown, path: string): unknown {
  let v: unknown = doc;
  for (const part of path.split('.')) {
    if (Array.isArray(v) && /^\d+$/.test(part)) v = v[Number(part)];
    else if (isPlainObject(v) && Object.prototype.hasOwnProperty.call(v, part)) v = v[part];
    else return undefined;
  }
  return v;
}

export function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur: Doc = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    const p = parts[i] as string;
    if (!isPlainObject(cur[p])) cur[p] = {};
    cur = cur[p] as Doc;
  }
  cur[parts[parts.length - 1] as string] = value;
}

export const newObjectId = (): ObjectId => new ObjectId();

/**
 * A string equal for two stored values exactly when they are the same BSON value of the same type
 * (an int32 1 changed to an int64 1 is a modification); field order counts in embedded documents.
 */
export function keyOfTyped(d: unknown): string {
  if (d === null || typeof d !== 'object') return keyOf(d);
  if (Array.isArray(d)) return `[${d.map(keyOfTyped).join(',')}]`;
  if (isPlainObject(d))
    return `{${Object.keys(d)
      .map((k) => `${JSON.stringify(k)}:${keyOfTyped(d[k])}`)
      .join(',')}}`;
  return `${typeName(d)}:${keyOf(toView(d))}`;
}

/**
 * Whether two stored values are the same BSON value of the same type, as `keyOfTyped` tells it but
 * compared structurally (stops at the first difference, and array elements or field names holding
 * commas cannot run into each other as they can in the joined key strings).
 */
export function sameTyped(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameTyped(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (let i = 0; i < ka.length; i++) {
      const k = ka[i] as string;
      if (k !== kb[i] || !sameTyped(a[k], b[k])) return false;
    }
    return true;
  }
  if (Array.isArray(b) || isPlainObject(b)) return false;
  return keyOfTyped(a) === keyOfTyped(b);
}
