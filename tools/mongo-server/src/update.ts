// Update documents: operator updates, replacement documents and pipeline updates, as the update and
// findAndModify commands apply them. Operators themselves are mingo's; this module validates what
// mingo would silently skip (MongoDB errors on $inc of a string, $push to a non-array, ...), keeps BSON
// types (see values.ts) and builds the document an upsert inserts.
import { Timestamp, Long } from 'bson';
import { applyUpdate, checkUpdatePipeline, cloneDeep, runUpdatePipeline } from './engine';
import { MongoServerError } from './errors';
import {
  formatValue,
  getPath,
  isNumeric,
  isPlainObject,
  keyOf,
  retype,
  sameTyped,
  setPath,
  toView,
  toViewDoc,
  typeName,
  type Doc,
} from './values';

const OPERATORS = new Set([
  '$set',
  '$unset',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$rename',
  '$push',
  '$addToSet',
  '$pull',
  '$pullAll',
  '$pop',
  '$bit',
  '$currentDate',
  '$setOnInsert',
]);

export type ParsedUpdate =
  | { kind: 'replacement'; doc: Doc }
  | {
      kind: 'operators';
      ops: Doc;
      /**
       * Top-level `$`-prefixed fields `$set`/`$setOnInsert` name: stored when the update inserts
       * (an upsert counts as an insert for field names), refused when it modifies a document.
       */
      dollarSet?: Doc;
      dollarSetOnInsert?: Doc;
    }
  | { kind: 'pipeline'; stages: Doc[] };

export function parseUpdate(u: unknown): ParsedUpdate {
  if (Array.isArray(u)) {
    if (!u.every(isPlainObject))
      throw new MongoServerError('FailedToParse', 'Update pipeline stages must be objects');
    checkUpdatePipeline(u as Doc[]);
    return { kind: 'pipeline', stages: u as Doc[] };
  }
  if (!isPlainObject(u)) {
    throw new MongoServerError(
      'FailedToParse',
      'Update argument must be either an object or an array',
    );
  }
  const keys = Object.keys(u);
  if (keys.length > 0 && keys[0]?.startsWith('$')) {
    for (const op of keys) {
      if (!OPERATORS.has(op)) {
        throw new MongoServerError(
          'FailedToParse',
          `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`,
        );
      }
      const arg = u[op];
      if (!isPlainObject(arg)) {
        throw new MongoServerError(
          'FailedToParse',
          `Modifiers operate on fields but we found type ${typeName(arg)} instead. For example: {$mod: {<field>: ...}} not {${op}: ${formatValue(toView(arg))}}`,
        );
      }
      for (const path of Object.keys(arg)) {
        if (isTopLevelDollarField(path) && (op === '$set' || op === '$setOnInsert')) continue;
        validateUpdatePath(path, op);
      }
    }
    validateArguments(u);
    const dollarSet = takeDollarFields(u['$set']);
    const dollarSetOnInsert = takeDollarFields(u['$setOnInsert']);
    if (!dollarSet && !dollarSetOnInsert) return { kind: 'operators', ops: u };
    const ops: Doc = { ...u };
    if (dollarSet) ops['$set'] = withoutDollarFields(u['$set'] as Doc);
    if (dollarSetOnInsert) ops['$setOnInsert'] = withoutDollarFields(u['$setOnInsert'] as Doc);
    return { kind: 'operators', ops, dollarSet, dollarSetOnInsert };
  }
  for (const k of keys) {
    if (k.startsWith('$')) {
      throw new MongoServerError(
        'DollarPrefixedFieldName',
        `The dollar ($) prefixed field '${k}' in '${k}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.`,
      );
    }
  }
  return { kind: 'replacement', doc: u };
}

/** `$name` (not the positional `$` or `$[...]`) with no dot: a top-level `$`-prefixed field. */
function isTopLevelDollarField(path: string): boolean {
  return path.length > 1 && path.startsWith('$') && !path.startsWith('$[') && !path.includes('.');
}

function takeDollarFields(arg: unknown): Doc | undefined {
  if (!isPlainObject(arg)) return undefined;
  const out: Doc = {};
  let any = false;
  for (const [k, v] of Object.entries(arg)) {
    if (!isTopLevelDollarField(k)) continue;
    out[k] = v;
    any = true;
  }
  return any ? out : undefined;
}

function withoutDollarFields(arg: Doc): Doc {
  return Object.fromEntries(Object.entries(arg).filter(([k]) => !isTopLevelDollarField(k)));
}

function validateUpdatePath(path: string, op: string): void {
  // A plain top-level field name (the common case) has nothing to check.
  if (path !== '' && !path.includes('.') && !path.includes('$')) return;
  if (path === '' || path.split('.').some((p) => p === '')) {
    throw new MongoServerError('BadValue', `An empty update path is not valid.`);
  }
  if (op === '$rename') return;
  // An embedded `$`-prefixed name (`address.$street`) is a field an update may modify (MongoDB
  // 5.0+, "Document Modifying Updates"); a top-level one only $set/$setOnInsert may name (above).
  const first = path.split('.')[0] as string;
  if (first.startsWith('$')) {
    throw new MongoServerError(
      'DollarPrefixedFieldName',
      `The dollar ($) prefixed field '${first}' in '${path}' is not valid for storage.`,
    );
  }
}

function validateArguments(ops: Doc): void {
  for (const [op, verb] of [
    ['$inc', 'increment'],
    ['$mul', 'multiply'],
  ] as const) {
    const arg = ops[op] as Doc | undefined;
    if (!arg) continue;
    for (const [path, amount] of Object.entries(arg)) {
      if (!isNumeric(amount)) {
        throw new MongoServerError(
          'TypeMismatch',
          `Cannot ${verb} with non-numeric argument: {${path}: ${formatValue(toView(amount))}}`,
        );
      }
    }
  }
  const rename = ops['$rename'] as Doc | undefined;
  for (const [from, to] of Object.entries(rename ?? {})) {
    if (typeof to !== 'string') {
      throw new MongoServerError(
        'BadValue',
        `The 'to' field for $rename must be a string: ${from}: ${formatValue(toView(to))}`,
      );
    }
  }
  const pop = ops['$pop'] as Doc | undefined;
  for (const [path, dir] of Object.entries(pop ?? {})) {
    const n = toView(dir);
    if (n !== 1 && n !== -1)
      throw new MongoServerError(
        'FailedToParse',
        `$pop expects 1 or -1, found: ${formatValue(n)} for ${path}`,
      );
  }
  const pullAll = ops['$pullAll'] as Doc | undefined;
  for (const [path, vals] of Object.entries(pullAll ?? {})) {
    if (!Array.isArray(vals)) {
      throw new MongoServerError(
        'BadValue',
        `$pullAll requires an array argument but was given a ${typeName(vals)} for ${path}`,
      );
    }
  }
}

/** What mingo gets: arithmetic and comparisons in view form; assigned values keep their BSON types. */
function engineModifier(ops: Doc, now: Date): Doc {
  const out: Doc = {};
  for (const [op, arg] of Object.entries(ops)) {
    if (op === '$setOnInsert') continue;
    if (op === '$currentDate') {
      // mingo stores milliseconds for {$type: 'timestamp'}; MongoDB stores a BSON timestamp.
      const set = (out['$set'] as Doc | undefined) ?? {};
      for (const [path, spec] of Object.entries(arg as Doc)) {
        const type = isPlainObject(spec) ? spec['$type'] : undefined;
        if (isPlainObject(spec) && type !== 'date' && type !== 'timestamp') {
          throw new MongoServerError(
            'BadValue',
            "The '$type' string field is required to be 'date' or 'timestamp'",
          );
        }
        set[path] =
          type === 'timestamp'
            ? new Timestamp({ t: Math.floor(now.getTime() / 1000), i: 1 })
            : new Date(now.getTime());
      }
      out['$set'] = { ...((out['$set'] as Doc | undefined) ?? {}), ...set };
      continue;
    }
    if (op === '$set')
      out['$set'] = { ...((out['$set'] as Doc | undefined) ?? {}), ...(arg as Doc) };
    else if (op === '$push') {
      const push: Doc = {};
      for (const [path, v] of Object.entries(arg as Doc)) {
        if (isPlainObject(v) && '$each' in v) {
          // Modifiers ($slice, $position, $sort) must be plain numbers for mingo; the pushed values keep
          // their BSON types unless $sort has to compare them.
          push[path] = {
            ...(toView(v) as Doc),
            $each: '$sort' in v ? toView(v['$each']) : v['$each'],
          };
        } else push[path] = v;
      }
      out['$push'] = push;
    } else out[op] = toView(arg);
  }
  return out;
}

const CREATING_OPS = [
  '$set',
  '$setOnInsert',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$push',
  '$addToSet',
  '$currentDate',
  '$bit',
];

/** MongoDB errors where mingo would silently leave the document alone. Positional paths are not checked. */
function validateTargets(view: Doc, ops: Doc): void {
  const id = formatValue(view['_id']);
  for (const [op, arg] of Object.entries(ops)) {
    const paths =
      op === '$rename' ? Object.values(arg as Doc).map(String) : Object.keys(arg as Doc);
    for (const path of paths) {
      if (path.includes('$')) continue;
      const parts = path.split('.');
      let cur: unknown = view;
      let viable = true;
      for (let i = 0; i < parts.length - 1 && cur !== undefined; i++) {
        const p = parts[i] as string;
        let next: unknown;
        if (Array.isArray(cur)) next = /^\d+$/.test(p) ? cur[Number(p)] : null;
        else if (isPlainObject(cur)) next = cur[p];
        else next = null;
        if (next === null || (next !== undefined && !isPlainObject(next) && !Array.isArray(next))) {
          if ((CREATING_OPS.includes(op) || op === '$rename') && next !== undefined) {
            viable = false;
            const field = parts[i + 1];
            throw new MongoServerError(
              'PathNotViable',
              `Cannot create field '${field}' in element {${p}: ${formatValue(next ?? (cur as Doc)[p] ?? null)}}`,
            );
          }
          cur = undefined;
          break;
        }
        cur = next;
      }
      if (!viable || cur === undefined) continue;
      const target = getPath(view, path);
      if (target === undefined) continue;
      const field = parts[parts.length - 1];
      if ((op === '$inc' || op === '$mul' || op === '$bit') && typeof target !== 'number') {
        throw new MongoServerError(
          'TypeMismatch',
          `Cannot apply ${op} to a value of non-numeric type. {_id: ${id}} has the field '${field}' of non-numeric type ${typeName(target)}`,
        );
      }
      if ((op === '$push' || op === '$addToSet') && !Array.isArray(target)) {
        throw new MongoServerError(
          'BadValue',
          `The field '${path}' must be an array but is of type ${typeName(target)} in document {_id: ${id}}`,
        );
      }
      if ((op === '$pull' || op === '$pullAll') && !Array.isArray(target)) {
        throw new MongoServerError('BadValue', 'Cannot apply $pull to a non-array value');
      }
      if (op === '$pop' && !Array.isArray(target)) {
        throw new MongoServerError(
          'TypeMismatch',
          `Path '${path}' contains an element of non-array type '${typeName(target)}'`,
        );
      }
    }
  }
}

export interface UpdateContext {
  filterView: Doc;
  arrayFilters?: Doc[];
  variables?: Doc;
}

/** The document an existing document becomes; throws on invalid updates. */
export function updatedDocument(
  old: { doc: Doc; view: Doc },
  update: ParsedUpdate,
  ctx: UpdateContext,
): Doc {
  // Read once: a stored record decodes its document from its bytes on each read.
  const oldDoc = old.doc;
  const oldView = old.view;
  const id = oldDoc['_id'];
  if (update.kind === 'replacement') {
    const replacement = update.doc;
    if ('_id' in replacement && keyOf(toView(replacement['_id'])) !== keyOf(oldView['_id'])) {
      throw new MongoServerError(
        'ImmutableField',
        `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(toView(replacement['_id']))}`,
      );
    }
    const { _id: _ignored, ...rest } = replacement;
    return { _id: id, ...rest };
  }
  const work = cloneDeep(oldView);
  let next: Doc;
  if (update.kind === 'pipeline') {
    // A new root without `_id` keeps the document's `_id` (MongoDB: "Updates with Aggregation
    // Pipeline"); one with a different `_id` is refused below as any update changing it.
    next = runUpdatePipeline(work, toView(update.stages) as Doc[], ctx.variables);
    if (!('_id' in next)) next = { _id: oldView['_id'], ...next };
    else if (Object.keys(next)[0] !== '_id') {
      const { _id, ...rest } = next;
      next = { _id, ...rest };
    }
  } else {
    const dollar = Object.keys(update.dollarSet ?? {})[0];
    if (dollar !== undefined) {
      throw new MongoServerError(
        'DollarPrefixedFieldName',
        `The dollar ($) prefixed field '${dollar}' in '${dollar}' is not valid for storage.`,
      );
    }
    const ops = withoutUnchangedId(update.ops, oldView);
    validateTargets(oldView, ops);
    const modifier = engineModifier(ops, new Date());
    if (Object.keys(modifier).length === 0) return oldDoc;
    next = applyUpdate(work, modifier, ctx.filterView, ctx.arrayFilters, ctx.variables);
  }
  const typed = retype(next, oldDoc) as Doc;
  if (keyOf(toView(typed['_id'])) !== keyOf(oldView['_id'])) {
    throw new MongoServerError(
      'ImmutableField',
      "Performing an update on the path '_id' would modify the immutable field '_id'",
    );
  }
  return typed;
}

/** `$set: { _id: <same value> }` is allowed by MongoDB; mingo refuses any `_id` path, so drop it. */
function withoutUnchangedId(ops: Doc, view: Doc): Doc {
  const out: Doc = {};
  for (const [op, arg] of Object.entries(ops)) {
    if ((op === '$set' || op === '$setOnInsert') && isPlainObject(arg) && '_id' in arg) {
      if (keyOf(toView(arg['_id'])) !== keyOf(view['_id'])) {
        throw new MongoServerError(
          'ImmutableField',
          "Performing an update on the path '_id' would modify the immutable field '_id'",
        );
      }
      const { _id: _same, ...rest } = arg;
      out[op] = rest;
    } else out[op] = arg;
  }
  return out;
}

/**
 * The document an upsert inserts: the query's equality fields, then the update applied with
 * `$setOnInsert` ("Upsert with Operator Expressions" / "Upsert with Replacement Document").
 */
export function upsertDocument(filter: Doc, update: ParsedUpdate, ctx: UpdateContext): Doc {
  const seed: Doc = {};
  collectEqualities(filter, seed);
  if (update.kind === 'replacement') {
    const doc = update.doc;
    if ('_id' in doc && '_id' in seed && keyOf(toView(doc['_id'])) !== keyOf(toView(seed['_id']))) {
      throw new MongoServerError(
        'ImmutableField',
        `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(toView(doc['_id']))}`,
      );
    }
    return '_id' in seed && !('_id' in doc) ? { _id: seed['_id'], ...doc } : { ...doc };
  }
  if (update.kind === 'pipeline') {
    let next = runUpdatePipeline(toViewDoc(seed), toView(update.stages) as Doc[], ctx.variables);
    if ('_id' in seed) {
      if (!('_id' in next)) next = { _id: toView(seed['_id']), ...next };
      else if (keyOf(toView(next['_id'])) !== keyOf(toView(seed['_id']))) {
        throw new MongoServerError(
          'ImmutableField',
          "Performing an update on the path '_id' would modify the immutable field '_id'",
        );
      }
    }
    return retype(next, seed) as Doc;
  }
  const ops: Doc = { ...update.ops };
  const onInsert = ops['$setOnInsert'] as Doc | undefined;
  delete ops['$setOnInsert'];
  if (onInsert) {
    const set = { ...((ops['$set'] as Doc | undefined) ?? {}) };
    for (const [path, v] of Object.entries(onInsert)) {
      if (path in set) {
        throw new MongoServerError(
          'ConflictingUpdateOperators',
          `Updating the path '${path}' would create a conflict at '${path}'`,
        );
      }
      set[path] = v;
    }
    ops['$set'] = set;
  }
  const set = ops['$set'] as Doc | undefined;
  if (set && '_id' in set) {
    seed['_id'] = set['_id'];
    const { _id: _moved, ...rest } = set;
    ops['$set'] = rest;
  }
  const seedView = toViewDoc(seed);
  validateTargets(seedView, ops);
  const modifier = engineModifier(ops, new Date());
  // An upsert is an insert for field names: top-level `$` fields are stored, as given.
  const dollar = { ...(update.dollarSet ?? {}), ...(update.dollarSetOnInsert ?? {}) };
  if (Object.keys(modifier).length === 0) return { ...seed, ...dollar };
  const next = applyUpdate(seedView, modifier, {}, ctx.arrayFilters, ctx.variables);
  return { ...(retype(next, seed) as Doc), ...dollar };
}

function collectEqualities(filter: Doc, into: Doc): void {
  for (const [k, v] of Object.entries(filter)) {
    if (k === '$and' && Array.isArray(v)) {
      for (const part of v) if (isPlainObject(part)) collectEqualities(part, into);
      continue;
    }
    if (k.startsWith('$')) continue;
    if (isPlainObject(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === '$eq') setPath(into, k, v['$eq']);
      else if (keys.length > 0 && keys.every((x) => !x.startsWith('$'))) setPath(into, k, v);
      continue;
    }
    if (v instanceof RegExp || (v as { _bsontype?: string } | null)?._bsontype === 'BSONRegExp')
      continue;
    setPath(into, k, v);
  }
}

export const isLong = (v: unknown): v is Long =>
  (v as { _bsontype?: string } | null)?._bsontype === 'Long';

/** What the `$set`/`$unset` fast path makes of a document. */
export interface FastUpdateResult {
  doc: Doc;
  /** Whether any field changed (BSON type included); false for a no-op update. */
  modified: boolean;
  /** The top-level fields the update names (indexes on other fields keep their keys). */
  touched: Set<string>;
}

/**
 * The fast path for update documents made only of `$set` and/or `$unset` on plain top-level field
 * names (no dots, no `$`, not `_id`): the new document is a shallow copy of the stored one with
 * those fields replaced in place, appended in the order given, or removed, which is what mingo's
 * `$set`/`$unset` followed by `retype` produce, without mingo's per-call setup or a whole-document
 * comparison. Undefined when the update is anything else (the general path then applies); also
 * when a `$set` value holds an embedded field name with a `$` prefix or a dot, or a field is in
 * both operators, so that the general path keeps deciding those cases.
 */
export function fastSetUnset(
  old: { doc: Doc },
  update: ParsedUpdate,
): FastUpdateResult | undefined {
  if (update.kind !== 'operators' || update.dollarSet || update.dollarSetOnInsert) return undefined;
  const ops = update.ops;
  let set: Doc | undefined;
  let unset: Doc | undefined;
  for (const op in ops) {
    if (op === '$set') set = ops[op] as Doc;
    else if (op === '$unset') unset = ops[op] as Doc;
    else return undefined;
  }
  const touched = new Set<string>();
  for (const arg of [set, unset]) {
    if (!arg) continue;
    for (const k in arg) {
      if (!plainFieldName(k) || touched.has(k)) return undefined;
      touched.add(k);
    }
  }
  if (touched.size === 0) return undefined;
  const doc: Doc = { ...old.doc };
  let modified = false;
  if (set) {
    for (const k in set) {
      const v = set[k];
      if (storableView(v) === NOT_PLAIN) return undefined;
      if (!modified && !(Object.prototype.hasOwnProperty.call(doc, k) && sameTyped(doc[k], v)))
        modified = true;
      doc[k] = v;
    }
  }
  if (unset) {
    for (const k in unset) {
      if (!Object.prototype.hasOwnProperty.call(doc, k)) continue;
      delete doc[k];
      modified = true;
    }
  }
  return { doc, modified, touched };
}

function plainFieldName(k: string): boolean {
  return k !== '' && k !== '_id' && k !== '__proto__' && !k.includes('.') && !k.includes('$');
}

const NOT_PLAIN = Symbol('not plain');

/** `toView` of a `$set` value, or NOT_PLAIN when an embedded field name starts with `$` or has a dot. */
function storableView(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const e = storableView(v[i]);
      if (e === NOT_PLAIN) return NOT_PLAIN;
      out[i] = e;
    }
    return out;
  }
  if (isPlainObject(v)) {
    const out: Doc = {};
    for (const k of Object.keys(v)) {
      if (k.startsWith('$') || k.includes('.') || k === '__proto__') return NOT_PLAIN;
      const e = storableView(v[k]);
      if (e === NOT_PLAIN) return NOT_PLAIN;
      out[k] = e;
    }
    return out;
  }
  return toView(v);
}
