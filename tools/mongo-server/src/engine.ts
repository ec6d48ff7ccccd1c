// The single place where mingo is called. Everything here works on view documents (see values.ts).
import type * as Mingo from 'mingo';
import type { Options } from 'mingo/types';
import type * as MingoUtil from 'mingo/util';
import { fromQueryEngineError, MongoServerError } from './errors';
import type { Doc } from './values';

type EngineOptions = Partial<Options>;

/**
 * mingo, loaded when a command first needs it rather than when the server starts. Loading it is
 * a visible part of a start after a crash (some 600 modules to initialise, tools/bench/README.md,
 * "soak"), and a start needs none of it: loading the data reads index keys from the bytes, and
 * the queries the apps make most are decided on the bytes too. A plain `require` because an
 * `import` is evaluated when this module is; the types come from the imports above.
 */
let mingoModule: typeof Mingo | undefined;
function mingo(): typeof Mingo {
  return (mingoModule ??= require('mingo') as typeof Mingo);
}

/** mingo's deep copy of a view (update.ts), loaded as mingo is. */
let mingoUtil: typeof MingoUtil | undefined;
export function cloneDeep(value: Doc): Doc {
  return (mingoUtil ??= require('mingo/util') as typeof MingoUtil).cloneDeep(value) as Doc;
}

function options(
  extra: { variables?: Doc; resolve?: (name: string) => Doc[] } = {},
): EngineOptions {
  return {
    idKey: '_id',
    // Server-side JavaScript ($where, $function, $accumulator) is disabled, as on a hardened mongod.
    scriptEnabled: false,
    useStrictMode: true,
    failOnError: true,
    processingMode: mingo().ProcessingMode.CLONE_OFF,
    ...(extra.variables ? { variables: extra.variables } : {}),
    ...(extra.resolve ? { collectionResolver: extra.resolve } : {}),
  };
}

export type Matcher = (doc: Doc) => boolean;

/**
 * How the fast paths below read one top-level field of an item: its view value when it is a
 * scalar (undefined when missing), or any object that is not a Date for a value they leave to
 * mingo. On a view that is the field itself; on a stored record, raw.ts `topValue` reads it from
 * the bytes, so that a filter or sort decided by its fast path decodes no document.
 */
export type FieldOf<T> = (item: T, field: string) => unknown;

const ownField: FieldOf<Doc> = (doc, field) =>
  Object.prototype.hasOwnProperty.call(doc, field) ? doc[field] : undefined;

export function compileFilter(filter: Doc, variables?: Doc): Matcher {
  return compileFilterOn(filter, variables, ownField, (doc) => doc);
}

/**
 * A filter on items that are not views (stored records): the fast paths read fields with
 * `fieldOf`, and mingo, when it has to decide, gets the item's view from `viewOf`.
 */
export function compileFilterOn<T>(
  filter: Doc,
  variables: Doc | undefined,
  fieldOf: FieldOf<T>,
  viewOf: (item: T) => Doc,
): (item: T) => boolean {
  if (Object.keys(filter).length === 0) return () => true;
  const simple = simpleEqualities(filter);
  if (simple) {
    // Plain scalar values are decided here; arrays (and anything unusual) still go to mingo, whose
    // Query is only built when a document needs it (it cannot fail to parse such a filter).
    let q: Mingo.Query | undefined;
    const slow = (item: T): boolean => {
      try {
        return (q ??= new (mingo().Query)(filter, options({ variables }))).test(viewOf(item));
      } catch (err) {
        throw fromQueryEngineError(err, 'query');
      }
    };
    return (item) => {
      let undecided = false;
      for (const [field, value] of simple) {
        const v = fieldOf(item, field);
        if (typeof v === typeof value) {
          if (v !== value) return false;
        } else if (v === undefined || v === null || typeof v !== 'object') return false;
        else undecided = true;
      }
      return undecided ? slow(item) : true;
    };
  }
  try {
    const q = new (mingo().Query)(filter, options({ variables }));
    const test = (item: T): boolean => {
      try {
        return q.test(viewOf(item));
      } catch (err) {
        throw fromQueryEngineError(err, 'query');
      }
    };
    const fast = compileScalarFilter(filter, fieldOf);
    if (!fast) return test;
    return (item) => fast(item) ?? test(item);
  } catch (err) {
    throw fromQueryEngineError(err, 'query');
  }
}

/** A filter decided on one document: true/false, or undefined when mingo must decide. */
export type TriMatcher<T = Doc> = (doc: T) => boolean | undefined;

const COMPARISONS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte']);

/**
 * A matcher for filters made of `$and`/`$or` over top-level fields compared (`$eq`, `$ne`, `$gt`,
 * `$gte`, `$lt`, `$lte`, or a plain value) with strings, finite numbers, booleans, dates or null:
 * refsync's list filters and most others. It decides a document whose compared values are scalars
 * (or missing) exactly as MongoDB does: equality and order within one type only (type
 * bracketing; numbers compare by value across BSON types, as the view holds them), null equal to
 * missing, `$ne` the negation of `$eq`. A value that is an array, a document, NaN or another BSON
 * type leaves the document undecided (undefined), and mingo decides it. Undefined for any other
 * filter (it is compiled by mingo alone). `test/planner.spec.ts` compares it with mingo.
 */
export function compileScalarFilter<T = Doc>(
  filter: Doc,
  fieldOf: FieldOf<T> = ownField as unknown as FieldOf<T>,
): TriMatcher<T> | undefined {
  const parts: TriMatcher<T>[] = [];
  for (const [key, cond] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(cond) || cond.length === 0) return undefined;
      const subs: TriMatcher<T>[] = [];
      for (const c of cond) {
        if (!isPlainDoc(c)) return undefined;
        const m = compileScalarFilter(c, fieldOf);
        if (!m) return undefined;
        subs.push(m);
      }
      parts.push(key === '$and' ? allOf(subs) : anyOf(subs));
      continue;
    }
    if (key === '' || key.startsWith('$') || key.includes('.')) return undefined;
    if (isPlainDoc(cond)) {
      const ops = Object.entries(cond);
      if (ops.length === 0) return undefined;
      for (const [op, operand] of ops) {
        if (!COMPARISONS.has(op) || !scalarOperand(operand)) return undefined;
        if (operand === null && op !== '$eq' && op !== '$ne') return undefined;
        parts.push(fieldTest(key, op, operand, fieldOf));
      }
      continue;
    }
    if (!scalarOperand(cond)) return undefined;
    parts.push(fieldTest(key, '$eq', cond, fieldOf));
  }
  return allOf(parts);
}

const isPlainDoc = (v: unknown): v is Doc =>
  v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

function scalarOperand(v: unknown): boolean {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v)) ||
    (v instanceof Date && !Number.isNaN(v.getTime()))
  );
}

function allOf<T>(parts: TriMatcher<T>[]): TriMatcher<T> {
  if (parts.length === 1) return parts[0] as TriMatcher<T>;
  return (doc) => {
    let undecided = false;
    for (const p of parts) {
      const r = p(doc);
      if (r === false) return false;
      if (r === undefined) undecided = true;
    }
    return undecided ? undefined : true;
  };
}

function anyOf<T>(parts: TriMatcher<T>[]): TriMatcher<T> {
  return (doc) => {
    let undecided = false;
    for (const p of parts) {
      const r = p(doc);
      if (r === true) return true;
      if (r === undefined) undecided = true;
    }
    return undecided ? undefined : false;
  };
}

/** -1/0/1 when `v` and the operand are of one comparable type, null when of different types. */
function compareScalar(v: unknown, operand: unknown): number | null {
  if (typeof v === 'number' && typeof operand === 'number')
    return v < operand ? -1 : v > operand ? 1 : 0;
  if (typeof v === 'string' && typeof operand === 'string')
    return v === operand ? 0 : compareCodePoints(v, operand);
  if (typeof v === 'boolean' && typeof operand === 'boolean') return Number(v) - Number(operand);
  if (v instanceof Date && operand instanceof Date)
    return Math.sign(v.getTime() - operand.getTime());
  return null;
}

function fieldTest<T>(
  field: string,
  op: string,
  operand: unknown,
  fieldOf: FieldOf<T>,
): TriMatcher<T> {
  const test = (v: unknown): boolean | undefined => {
    // Values this matcher does not decide: arrays (any element may match), documents, NaN and
    // BSON types other than those above, except that any of them but an array is not null
    // (refsync's `prev: {$ne: null}` on a document).
    if (v !== null && v !== undefined && typeof v === 'object' && !(v instanceof Date)) {
      if (operand === null && !Array.isArray(v)) return op !== '$eq';
      return undefined;
    }
    if (typeof v === 'number' && Number.isNaN(v)) return undefined;
    if (operand === null) {
      const isNull = v === null || v === undefined;
      return op === '$eq' ? isNull : !isNull;
    }
    const c = compareScalar(v, operand);
    switch (op) {
      case '$eq':
        return c === 0;
      case '$ne':
        return c !== 0;
      case '$gt':
        return c !== null && c > 0;
      case '$gte':
        return c !== null && c >= 0;
      case '$lt':
        return c !== null && c < 0;
      default:
        return c !== null && c <= 0;
    }
  };
  return (doc) => test(fieldOf(doc, field));
}

/**
 * `{field: <string | boolean | finite number>, ...}` on top-level fields: a stored value of the same
 * JS type matches exactly when it is equal (view numbers compare by value across BSON types), and a
 * missing, null or other scalar value never matches.
 */
function simpleEqualities(filter: Doc): [string, string | boolean | number][] | undefined {
  const out: [string, string | boolean | number][] = [];
  for (const field of Object.keys(filter)) {
    const value = filter[field];
    if (field.startsWith('$') || field.includes('.') || field === '') return undefined;
    if (typeof value === 'string' || typeof value === 'boolean') out.push([field, value]);
    else if (typeof value === 'number' && Number.isFinite(value)) out.push([field, value]);
    else return undefined;
  }
  return out;
}

export interface FindSpec {
  sort?: Doc;
  skip?: number;
  limit?: number;
}

/**
 * Filters, sorts, skips and limits items; returns the same items (no copies), ties in input order.
 * Sorts on top-level scalars read fields with `fieldOf`; mingo's sort gets views from `viewOf`.
 */
export function select<T>(
  items: T[],
  match: (item: T) => boolean,
  spec: FindSpec,
  viewOf: (item: T) => Doc,
  fieldOf: FieldOf<T>,
): T[] {
  let out = items.filter(match);
  if (spec.sort && Object.keys(spec.sort).length) {
    out = fastSort(out, fieldOf, spec.sort) ?? mingoSort(out, viewOf, spec.sort);
  }
  const skip = spec.skip ?? 0;
  const limit = spec.limit ?? 0;
  if (skip || limit) out = out.slice(skip, limit ? skip + limit : undefined);
  return out;
}

function mingoSort<T>(items: T[], viewOf: (item: T) => Doc, sort: Doc): T[] {
  const byView = new Map<Doc, T>();
  for (const item of items) byView.set(viewOf(item), item);
  try {
    const sorted = new (mingo().Query)({}, options())
      .find([...byView.keys()])
      .sort(sort as Record<string, 1 | -1>)
      .all() as Doc[];
    return sorted.map((v) => byView.get(v) as T);
  } catch (err) {
    throw fromQueryEngineError(err, 'query');
  }
}

/**
 * Sorts by top-level fields whose values are all missing, null, numbers, strings, booleans or dates
 * (what most sorts are), in MongoDB's order: by BSON type first (null and missing < numbers <
 * strings < booleans < dates), NaN below every other number, strings by code point (the UTF-8 byte
 * order of the simple collation), ties in input order. Undefined when a field or value is anything
 * else (dotted paths, arrays, documents, other BSON types); mingo sorts those.
 */
function fastSort<T>(docs: T[], fieldOf: FieldOf<T>, sort: Doc): T[] | undefined {
  const fields = Object.keys(sort);
  if (fields.some((f) => f.includes('.') || f.startsWith('$'))) return undefined;
  const dirs = fields.map((f) => (sort[f] === -1 ? -1 : 1));
  const keys = new Array<unknown[]>(docs.length);
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i] as T;
    const row = new Array<unknown>(fields.length);
    for (let j = 0; j < fields.length; j++) {
      const v = fieldOf(doc, fields[j] as string);
      if (sortRank(v) === 0) return undefined;
      row[j] = v;
    }
    keys[i] = row;
  }
  const order = docs.map((_, i) => i);
  order.sort((a, b) => {
    const ka = keys[a] as unknown[];
    const kb = keys[b] as unknown[];
    for (let j = 0; j < fields.length; j++) {
      const c = compareSortValues(ka[j], kb[j]);
      if (c !== 0) return c * (dirs[j] as number);
    }
    return a - b;
  });
  return order.map((i) => docs[i] as T);
}

/** BSON comparison order rank of the values fastSort handles; 0 for any other value. */
function sortRank(v: unknown): number {
  if (v === undefined || v === null) return 1;
  switch (typeof v) {
    case 'number':
      return 2;
    case 'string':
      return 3;
    case 'boolean':
      return 8;
    default:
      return v instanceof Date ? 9 : 0;
  }
}

function compareSortValues(a: unknown, b: unknown): number {
  const ra = sortRank(a);
  const rb = sortRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 2: {
      const x = a as number;
      const y = b as number;
      if (Number.isNaN(x) || Number.isNaN(y))
        return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : -1) : 1;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 3:
      return compareCodePoints(a as string, b as string);
    case 8:
      return Number(a) - Number(b);
    case 9:
      return (a as Date).getTime() - (b as Date).getTime();
    default:
      return 0;
  }
}

/**
 * Strings in code point order, which is the UTF-8 byte order MongoDB's simple collation uses. UTF-16
 * code units give the same order except where a surrogate (a code point above U+FFFF) meets a unit
 * of U+E000-U+FFFF.
 */
function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys && (x >= 0xe000 || y >= 0xe000)) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

export function project(docs: Doc[], projection: Doc, variables?: Doc): Doc[] {
  try {
    return new (mingo().Query)({}, options({ variables })).find(docs, projection).all() as Doc[];
  } catch (err) {
    throw fromQueryEngineError(err, 'projection');
  }
}

export function aggregate(
  docs: Doc[],
  pipeline: Doc[],
  resolve: (name: string) => Doc[],
  variables?: Doc,
): Doc[] {
  try {
    return new (mingo().Aggregator)(pipeline, options({ resolve, variables })).run(docs) as Doc[];
  } catch (err) {
    throw fromQueryEngineError(err, 'pipeline');
  }
}

/** The stages MongoDB allows in an update pipeline ("Updates with Aggregation Pipeline"). */
const UPDATE_STAGES = new Set([
  '$addFields',
  '$set',
  '$project',
  '$unset',
  '$replaceRoot',
  '$replaceWith',
]);

/** Only the stages MongoDB allows in an update pipeline (InvalidOptions otherwise, as mongod). */
export function checkUpdatePipeline(stages: Doc[]): void {
  for (const stage of stages) {
    const name = Object.keys(stage)[0] ?? '';
    if (Object.keys(stage).length !== 1) {
      throw new MongoServerError(
        'Location40323',
        'A pipeline stage specification object must contain exactly one field.',
      );
    }
    if (!UPDATE_STAGES.has(name)) {
      throw new MongoServerError(
        'InvalidOptions',
        `${name} is not allowed to be used within an update`,
      );
    }
  }
}

/**
 * Runs an update pipeline on one view document and returns the new root. The pipeline is run as an
 * aggregation of that one document (not through mingo's updater, which cannot report fields it
 * sets under `$`-prefixed or dotted names), so `$replaceWith`/`$setField` may set any field name.
 */
export function runUpdatePipeline(view: Doc, stages: Doc[], variables?: Doc): Doc {
  let out: Doc[];
  try {
    out = new (mingo().Aggregator)(stages, options({ variables })).run([view]) as Doc[];
  } catch (err) {
    throw fromQueryEngineError(err, 'pipeline');
  }
  const next = out[0];
  if (out.length !== 1 || !next || typeof next !== 'object' || Array.isArray(next)) {
    throw new MongoServerError('BadValue', 'Update pipeline did not produce a single document');
  }
  return next;
}

/**
 * Evaluates a command's `let` document once, as MongoDB does: each value is an expression over no
 * document (constants, operators, `$$NOW`), and the names follow mongod's rules for user variables.
 */
export function evaluateLet(letDoc: Doc | undefined, base?: Doc): Doc | undefined {
  if (!letDoc) return base;
  for (const name of Object.keys(letDoc)) checkVariableName(name);
  let out: Doc[];
  try {
    out = new (mingo().Aggregator)([{ $replaceWith: letDoc }], options({ variables: base })).run([
      {},
    ]) as Doc[];
  } catch (err) {
    throw fromQueryEngineError(err, 'pipeline');
  }
  return { ...(base ?? {}), ...(out[0] ?? {}) };
}

/** mongod's Variables::validateNameForUserWrite. */
function checkVariableName(name: string): void {
  if (name === '')
    throw new MongoServerError('Location16866', 'empty variable names are not allowed');
  const first = name.charCodeAt(0);
  if (!((first >= 97 && first <= 122) || first > 127)) {
    throw new MongoServerError(
      'Location16867',
      `'${name}' starts with an invalid character for a user variable name`,
    );
  }
  for (const ch of name) {
    const c = ch.charCodeAt(0);
    const ok =
      (c >= 97 && c <= 122) ||
      (c >= 65 && c <= 90) ||
      (c >= 48 && c <= 57) ||
      ch === '_' ||
      c > 127;
    if (!ok) {
      throw new MongoServerError(
        'Location16868',
        `'${name}' contains an invalid character for a variable name: '${ch}'`,
      );
    }
  }
}

/**
 * Applies an update (operator document or pipeline) to one view document in place of a copy and
 * returns the new view. `condition` is the query, needed by the positional `$` operator.
 */
export function applyUpdate(
  view: Doc,
  modifier: Doc | Doc[],
  condition: Doc,
  arrayFilters: Doc[] | undefined,
  variables?: Doc,
): Doc {
  const docs = [view];
  try {
    mingo().updateOne(
      docs,
      condition,
      modifier as never,
      {
        cloneMode: 'deep',
        ...(arrayFilters ? { arrayFilters } : {}),
        ...(variables ? { let: variables } : {}),
      },
      options(),
    );
  } catch (err) {
    if (err instanceof MongoServerError) throw err;
    throw fromQueryEngineError(err, 'update');
  }
  return docs[0] as Doc;
}
