// Reads and writes: find, getMore, killCursors, insert, update, delete, findAndModify, count, distinct,
// aggregate. https://www.mongodb.com/docs/manual/reference/command/nav-crud/
import { Long } from 'bson';
import type { Collection, StoredRecord } from '../collection';
import { evaluateLet, aggregate as runPipeline } from '../engine';
import { MongoServerError } from '../errors';
import { findRecords, findSource, projectRecords, validateSort } from '../query';
import { sequenceBytes } from '../raw';
import {
  fastSetUnset,
  parseUpdate,
  updatedDocument,
  upsertDocument,
  type ParsedUpdate,
} from '../update';
import {
  isPlainObject,
  keyOf,
  num,
  retype,
  sameTyped,
  toView,
  typeName,
  valuesAtPath,
  type Doc,
} from '../values';
import {
  collectionName,
  optionalArray,
  optionalBool,
  optionalDoc,
  optionalInt,
  refuseUnsupported,
  wrongType,
  type CommandContext,
  type CommandHandler,
} from './context';

const MAX_WRITE_BATCH_SIZE = 100_000;

/**
 * Checks a hint against the collection's indexes; returns the scan direction it asks for: -1 for
 * `{$natural: -1}` (documents in reverse natural order, as mongod scans them), else 1.
 */
function checkHint(coll: Collection | undefined, hint: unknown): 1 | -1 {
  if (hint === undefined || hint === null) return 1;
  if (isPlainObject(hint) && Object.keys(hint).length === 0) return 1;
  const known = coll ? [...coll.indexes.values()] : [];
  let found;
  if (typeof hint === 'string') found = known.find((i) => i.name === hint);
  else if (isPlainObject(hint)) {
    if ('$natural' in hint) return (num(hint['$natural']) ?? 1) < 0 ? -1 : 1;
    const wanted = JSON.stringify(toView(hint));
    found = known.find((i) => JSON.stringify(toView(i.spec.key)) === wanted);
  }
  if (!found) {
    throw new MongoServerError(
      'BadValue',
      'error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index',
    );
  }
  if (!found.complete) {
    // A hinted sparse/partial index would leave documents out of the result; this server cannot.
    throw new MongoServerError(
      'BadValue',
      `hinting the sparse or partial index '${found.name}' is not supported by this server`,
    );
  }
  return 1;
}

/** find options this server knows but cannot honour: refused unless absent, false or empty. */
const FIND_UNSUPPORTED = [
  'collation',
  'returnKey',
  'showRecordId',
  'tailable',
  'awaitData',
  'max',
  'min',
  'ntoreturn',
];

const find: CommandHandler = {
  read: true,
  fields: [
    'filter',
    'sort',
    'projection',
    'skip',
    'limit',
    'batchSize',
    'singleBatch',
    'hint',
    'let',
    'noCursorTimeout',
    'allowPartialResults',
    'allowDiskUse',
    'readOnce',
    // Accepted with no effect since MongoDB 4.4 (its optimisation is automatic).
    'oplogReplay',
    ...FIND_UNSUPPORTED,
  ],
  run(ctx) {
    const name = collectionName(ctx);
    refuseUnsupported(ctx, ...FIND_UNSUPPORTED);
    const coll = ctx.store.collection(ctx.db, name);
    const filter = optionalDoc(ctx, 'filter') ?? {};
    const sort = validateSort(optionalDoc(ctx, 'sort'));
    const projection = optionalDoc(ctx, 'projection');
    const skip = optionalInt(ctx, 'skip') ?? 0;
    const rawLimit = ctx.cmd['limit'] === undefined ? 0 : num(ctx.cmd['limit']);
    if (rawLimit === undefined)
      throw wrongType(ctx, 'limit', ctx.cmd['limit'], 'long, int, decimal, double');
    const batchSize = optionalInt(ctx, 'batchSize');
    const variables = optionalDoc(ctx, 'let');
    const natural = checkHint(coll, ctx.cmd['hint']);
    // A negative limit is the legacy "single batch of |limit|" form.
    const limit = Math.abs(rawLimit);
    const singleBatch = (optionalBool(ctx, 'singleBatch') ?? false) || rawLimit < 0;
    const vars = letVariables(variables);
    const source = findSource(
      coll,
      filter,
      { sort, skip, limit, variables: vars, natural },
      projection,
    );
    const ns = `${ctx.db}.${name}`;
    // noCursorTimeout: the cursor is never dropped for being idle (killCursors still ends it).
    const noTimeout = optionalBool(ctx, 'noCursorTimeout') ?? false;
    const { batch, id } = ctx.cursors.open(ns, source, batchSize, singleBatch, noTimeout);
    return { cursor: { firstBatch: batch, id, ns }, ok: 1 };
  },
};

const getMore: CommandHandler = {
  fields: ['collection', 'batchSize', 'term', 'lastKnownCommittedOpTime'],
  run(ctx) {
    const id = ctx.cmd['getMore'];
    if (!(id instanceof Long)) throw wrongType(ctx, 'getMore', id, 'long');
    const collection = ctx.cmd['collection'];
    if (typeof collection !== 'string') throw wrongType(ctx, 'collection', collection, 'string');
    const batchSize = optionalInt(ctx, 'batchSize');
    if (ctx.cmd['maxTimeMS'] !== undefined) {
      // Only tailable awaitData cursors (which this server refuses) take a maxTimeMS on getMore.
      throw new MongoServerError(
        'BadValue',
        'cannot set maxTimeMS on getMore command for a non-awaitData cursor',
      );
    }
    const cursor = ctx.cursors.get(id);
    if (!cursor)
      throw new MongoServerError('CursorNotFound', `cursor id ${id.toString()} not found`);
    const ns = `${ctx.db}.${collection}`;
    if (cursor.ns !== ns) {
      throw new MongoServerError(
        'Unauthorized',
        `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`,
      );
    }
    const { batch, id: next } = ctx.cursors.next(cursor, batchSize);
    return { cursor: { nextBatch: batch, id: next, ns }, ok: 1 };
  },
};

const killCursors: CommandHandler = {
  fields: ['cursors'],
  run(ctx) {
    collectionName(ctx);
    const ids = optionalArray(ctx, 'cursors');
    if (!ids)
      throw new MongoServerError(
        'Location40414',
        "BSON field 'killCursors.cursors' is missing but a required field",
      );
    const killed: Long[] = [];
    const notFound: Long[] = [];
    for (const id of ids) {
      if (!(id instanceof Long)) throw wrongType(ctx, 'cursors', id, 'long');
      (ctx.cursors.kill(id) ? killed : notFound).push(id);
    }
    return {
      cursorsKilled: killed,
      cursorsNotFound: notFound,
      cursorsAlive: [],
      cursorsUnknown: [],
      ok: 1,
    };
  },
};

function writeBatch(ctx: CommandContext, field: string): Doc[] {
  const items = optionalArray(ctx, field);
  if (!items)
    throw new MongoServerError(
      'Location40414',
      `BSON field '${ctx.name}.${field}' is missing but a required field`,
    );
  if (items.length === 0 || items.length > MAX_WRITE_BATCH_SIZE) {
    throw new MongoServerError(
      'InvalidLength',
      `Write batch sizes must be between 1 and ${MAX_WRITE_BATCH_SIZE}. Got ${items.length} operations.`,
    );
  }
  for (const item of items) if (!isPlainObject(item)) throw wrongType(ctx, field, item, 'object');
  return items as Doc[];
}

/** Runs each statement; ordered writes stop at the first error, unordered ones go on. */
function eachStatement(
  ctx: CommandContext,
  items: Doc[],
  apply: (item: Doc, index: number) => void,
): Doc[] {
  const ordered = optionalBool(ctx, 'ordered') ?? true;
  const writeErrors: Doc[] = [];
  items.forEach((item, index) => {
    if (ordered && writeErrors.length) return;
    try {
      apply(item, index);
    } catch (err) {
      if (!(err instanceof MongoServerError)) throw err;
      writeErrors.push(err.toWriteError(index));
    }
  });
  return writeErrors;
}

const insert: CommandHandler = {
  write: true,
  fields: ['documents', 'ordered', 'bypassDocumentValidation'],
  run(ctx) {
    const name = collectionName(ctx);
    const docs = writeBatch(ctx, 'documents');
    const wire = sequenceBytes(docs);
    const coll = ctx.store.ensureCollection(ctx.db, name);
    let n = 0;
    const writeErrors = eachStatement(ctx, docs, (doc, index) => {
      coll.insert(doc, wire?.[index]);
      n++;
    });
    return { n, ...(writeErrors.length ? { writeErrors } : {}), ok: 1 };
  },
};

interface UpdateStatement {
  filter: Doc;
  update: ParsedUpdate;
  multi: boolean;
  upsert: boolean;
  arrayFilters?: Doc[];
  variables?: Doc;
  sort?: Doc;
  natural?: 1 | -1;
}

const UPDATE_STATEMENT_FIELDS = new Set([
  'q',
  'u',
  'multi',
  'upsert',
  'arrayFilters',
  'hint',
  'collation',
  'c',
  'upsertSupplied',
  'sort',
]);

function parseArrayFilters(v: unknown): Doc[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every(isPlainObject)) {
    throw new MongoServerError('TypeMismatch', 'arrayFilters must be an array of objects');
  }
  return toView(v) as Doc[];
}

/**
 * One update statement. The collection is created only when an upsert inserts, as in MongoDB, where an
 * update that matches nothing leaves a missing collection missing.
 */
function doUpdate(
  existing: Collection | undefined,
  create: () => Collection,
  st: UpdateStatement,
): { n: number; nModified: number; upserted?: unknown; records: StoredRecord[] } {
  if (st.multi && st.update.kind === 'replacement') {
    throw new MongoServerError(
      'FailedToParse',
      'multi update is not supported for replacement-style update',
    );
  }
  const filterView = toView(st.filter) as Doc;
  const matches = findRecords(existing, st.filter, {
    natural: st.natural,
    sort: st.sort,
    limit: st.multi ? 0 : 1,
    variables: st.variables,
  });
  if (matches.length === 0 || !existing) {
    if (!st.upsert) return { n: 0, nModified: 0, records: [] };
    const doc = upsertDocument(st.filter, st.update, {
      filterView,
      arrayFilters: st.arrayFilters,
      variables: st.variables,
    });
    const record = create().insert(doc);
    return { n: 1, nModified: 0, upserted: record.doc['_id'], records: [record] };
  }
  let nModified = 0;
  for (const record of matches) {
    const fast = fastSetUnset(record, st.update);
    if (fast) {
      if (!fast.modified) continue;
      existing.replace(record, fast.doc, fast.touched);
      nModified++;
      continue;
    }
    // Decoded once (a stored record decodes its document from its bytes on each read).
    const before = record.doc;
    const next = updatedDocument({ doc: before, view: toView(before) as Doc }, st.update, {
      filterView,
      arrayFilters: st.arrayFilters,
      variables: st.variables,
    });
    if (next === before || sameBson(next, before)) continue;
    existing.replace(record, next);
    nModified++;
  }
  return { n: matches.length, nModified, records: matches };
}

function sameBson(a: Doc, b: Doc): boolean {
  return sameTyped(a, b);
}

const update: CommandHandler = {
  write: true,
  fields: ['updates', 'ordered', 'bypassDocumentValidation', 'let'],
  run(ctx) {
    const name = collectionName(ctx);
    const statements = writeBatch(ctx, 'updates');
    const variables = letVariables(optionalDoc(ctx, 'let'));
    const create = (): Collection => ctx.store.ensureCollection(ctx.db, name);
    let n = 0;
    let nModified = 0;
    const upserted: Doc[] = [];
    // Malformed statements fail the whole command (mongod parses the batch before running it).
    for (const s of statements) {
      checkStatement('update.updates', s, UPDATE_STATEMENT_FIELDS);
      if (s['u'] === undefined)
        throw new MongoServerError(
          'Location40414',
          "BSON field 'update.updates.u' is missing but a required field",
        );
      refuseUnsupported({ ...ctx, name: 'update.updates', cmd: s }, 'collation');
    }
    const writeErrors = eachStatement(ctx, statements, (s, index) => {
      const sub = { ...ctx, name: 'update.updates', cmd: s };
      const coll = ctx.store.collection(ctx.db, name);
      const natural = checkHint(coll, s['hint']);
      if (s['c'] !== undefined && !Array.isArray(s['u'])) {
        throw new MongoServerError(
          'FailedToParse',
          "'c' (constants) may only be specified with pipeline-style updates",
        );
      }
      if (s['c'] !== undefined && !isPlainObject(s['c']))
        throw wrongType(sub, 'c', s['c'], 'object');
      // Statement constants (`c`) are evaluated like `let` and shadow it for their statement.
      const vars = isPlainObject(s['c'])
        ? evaluateLet(toView(s['c']) as Doc, variables)
        : variables;
      const multi = optionalBool(sub, 'multi') ?? false;
      const sort = validateSort(optionalDoc(sub, 'sort'));
      // MongoDB 8.0: `sort` picks the document an update of one document changes.
      if (sort && Object.keys(sort).length > 0 && multi)
        throw new MongoServerError('FailedToParse', 'Cannot specify sort with multi=true');
      const res = doUpdate(coll, create, {
        filter: s['q'] as Doc,
        update: parseUpdate(s['u']),
        multi,
        upsert: optionalBool(sub, 'upsert') ?? false,
        arrayFilters: parseArrayFilters(s['arrayFilters']),
        variables: vars,
        sort,
        natural,
      });
      n += res.n;
      nModified += res.nModified;
      if (res.upserted !== undefined) upserted.push({ index, _id: res.upserted });
    });
    return {
      n,
      nModified,
      ...(upserted.length ? { upserted } : {}),
      ...(writeErrors.length ? { writeErrors } : {}),
      ok: 1,
    };
  },
};

const DELETE_STATEMENT_FIELDS = new Set(['q', 'limit', 'hint', 'collation']);

const del: CommandHandler = {
  write: true,
  fields: ['deletes', 'ordered', 'let'],
  run(ctx) {
    const name = collectionName(ctx);
    const statements = writeBatch(ctx, 'deletes');
    const variables = letVariables(optionalDoc(ctx, 'let'));
    const coll = ctx.store.collection(ctx.db, name);
    // Malformed statements fail the whole command (mongod parses the batch before running it).
    for (const s of statements) {
      checkStatement('delete.deletes', s, DELETE_STATEMENT_FIELDS);
      refuseUnsupported({ ...ctx, name: 'delete.deletes', cmd: s }, 'collation');
      const limit = num(s['limit']);
      if (limit !== 0 && limit !== 1) {
        throw new MongoServerError(
          'FailedToParse',
          `The limit field in delete objects must be 0 or 1. Got ${String(limit)}`,
        );
      }
    }
    let n = 0;
    const writeErrors = eachStatement(ctx, statements, (s) => {
      const limit = num(s['limit']);
      const natural = checkHint(coll, s['hint']);
      const matches = findRecords(coll, s['q'] as Doc, {
        natural,
        limit,
        variables,
      });
      for (const r of matches) coll?.remove(r);
      n += matches.length;
    });
    return { n, ...(writeErrors.length ? { writeErrors } : {}), ok: 1 };
  },
};

const findAndModify: CommandHandler = {
  write: true,
  fields: [
    'query',
    'sort',
    'remove',
    'update',
    'new',
    'fields',
    'upsert',
    'bypassDocumentValidation',
    'collation',
    'arrayFilters',
    'hint',
    'let',
  ],
  run(ctx) {
    const name = collectionName(ctx);
    refuseUnsupported(ctx, 'collation');
    const filter = optionalDoc(ctx, 'query') ?? {};
    const sort = validateSort(optionalDoc(ctx, 'sort'));
    const remove = optionalBool(ctx, 'remove') ?? false;
    const returnNew = optionalBool(ctx, 'new') ?? false;
    const upsert = optionalBool(ctx, 'upsert') ?? false;
    const fields = optionalDoc(ctx, 'fields');
    const rawUpdate = ctx.cmd['update'];
    const vars = letVariables(optionalDoc(ctx, 'let'));
    if (remove && rawUpdate !== undefined)
      throw new MongoServerError('FailedToParse', 'Cannot specify both an update and remove=true');
    if (!remove && rawUpdate === undefined)
      throw new MongoServerError(
        'FailedToParse',
        'Either an update or remove=true must be specified',
      );
    if (remove && (upsert || returnNew)) {
      throw new MongoServerError(
        'FailedToParse',
        `Cannot specify both ${upsert ? 'upsert=true' : 'new=true'} and remove=true`,
      );
    }
    if (remove) {
      const coll = ctx.store.collection(ctx.db, name);
      const natural = checkHint(coll, ctx.cmd['hint']);
      const [record] = findRecords(coll, filter, { sort, limit: 1, variables: vars, natural });
      if (!record) return { lastErrorObject: { n: 0 }, value: null, ok: 1 };
      coll?.remove(record);
      return { lastErrorObject: { n: 1 }, value: projectRecords([record], fields)[0], ok: 1 };
    }
    const coll = ctx.store.collection(ctx.db, name);
    const natural = checkHint(coll, ctx.cmd['hint']);
    const parsed = parseUpdate(rawUpdate);
    const [before] = findRecords(coll, filter, { sort, limit: 1, variables: vars, natural });
    const beforeDoc = before?.doc;
    const res = doUpdate(coll, () => ctx.store.ensureCollection(ctx.db, name), {
      filter,
      update: parsed,
      multi: false,
      upsert,
      arrayFilters: parseArrayFilters(ctx.cmd['arrayFilters']),
      variables: vars,
      sort,
      natural,
    });
    const record = res.records[0];
    let value: Doc | null = null;
    if (record && (returnNew || beforeDoc)) {
      const shown = returnNew ? record : { doc: beforeDoc as Doc, view: toView(beforeDoc) as Doc };
      value = projectRecords([shown], fields)[0] ?? null;
    }
    const lastErrorObject: Doc = {
      n: res.n,
      updatedExisting: res.upserted === undefined && res.n > 0,
    };
    if (res.upserted !== undefined) lastErrorObject['upserted'] = res.upserted;
    return { lastErrorObject, value, ok: 1 };
  },
};

const count: CommandHandler = {
  read: true,
  fields: ['query', 'limit', 'skip', 'hint', 'collation', 'fields'],
  run(ctx) {
    const name = collectionName(ctx);
    refuseUnsupported(ctx, 'collation');
    const coll = ctx.store.collection(ctx.db, name);
    checkHint(coll, ctx.cmd['hint']);
    const query = optionalDoc(ctx, 'query') ?? {};
    const skip = optionalInt(ctx, 'skip') ?? 0;
    const limit = Math.abs(num(ctx.cmd['limit']) ?? 0);
    const n =
      Object.keys(query).length === 0 && coll
        ? Math.max(0, Math.min(limit || Number.POSITIVE_INFINITY, coll.records.size - skip))
        : findRecords(coll, query, { skip, limit }).length;
    return { n, ok: 1 };
  },
};

const distinct: CommandHandler = {
  read: true,
  fields: ['key', 'query', 'collation', 'hint'],
  run(ctx) {
    const name = collectionName(ctx);
    refuseUnsupported(ctx, 'collation');
    const key = ctx.cmd['key'];
    if (typeof key !== 'string') throw wrongType(ctx, 'key', key, 'string');
    if (key.startsWith('$')) throw new MongoServerError('BadValue', `Invalid key ${key}`);
    const coll = ctx.store.collection(ctx.db, name);
    checkHint(coll, ctx.cmd['hint']);
    const records = findRecords(coll, optionalDoc(ctx, 'query') ?? {});
    const seen = new Map<string, unknown>();
    for (const r of records) {
      for (const v of valuesAtPath(r.doc, key)) {
        if (v === undefined) continue;
        const k = keyOf(toView(v));
        if (!seen.has(k)) seen.set(k, v);
      }
    }
    return { values: [...seen.values()], ok: 1 };
  },
};

const BLOCKED_STAGES = new Set([
  '$out',
  '$merge',
  '$changeStream',
  '$currentOp',
  '$listSessions',
  '$collStats',
  '$indexStats',
  '$planCacheStats',
  '$search',
  '$searchMeta',
  '$vectorSearch',
  '$geoNear',
  '$listLocalSessions',
  '$documents',
  '$unionWith',
  '$graphLookup',
]);

function checkPipeline(stages: unknown[]): Doc[] {
  for (const stage of stages) {
    if (!isPlainObject(stage) || Object.keys(stage).length !== 1) {
      throw new MongoServerError(
        'Location40323',
        'A pipeline stage specification object must contain exactly one field.',
      );
    }
    const name = Object.keys(stage)[0] as string;
    if (BLOCKED_STAGES.has(name)) {
      throw new MongoServerError(
        'Location40324',
        `Unrecognized pipeline stage name: '${name}' (not supported by this server)`,
      );
    }
    if (name === '$lookup' || name === '$facet') {
      const spec = stage[name];
      if (isPlainObject(spec) && Array.isArray(spec['pipeline'])) checkPipeline(spec['pipeline']);
      if (name === '$facet' && isPlainObject(spec))
        for (const sub of Object.values(spec)) if (Array.isArray(sub)) checkPipeline(sub);
    }
  }
  return stages as Doc[];
}

/**
 * A `$project` that includes or computes fields returns `_id` first in MongoDB unless it excludes
 * it; mingo puts an implicitly included `_id` last. Naming `_id: 1` first gives mingo MongoDB's
 * order (the value is the same). Exclusion projections (only 0/false) already keep stored order.
 */
function idFirst(stages: Doc[]): Doc[] {
  return stages.map((stage) => {
    const [name] = Object.keys(stage);
    const spec = name === undefined ? undefined : stage[name];
    if (!isPlainObject(spec)) return stage;
    if (name === '$project') {
      const exclusion = Object.entries(spec).every(
        ([k, v]) => k === '_id' || v === 0 || v === false,
      );
      if ('_id' in spec || exclusion) return stage;
      return { $project: { _id: 1, ...spec } };
    }
    if (name === '$facet') {
      const facets: Doc = {};
      for (const [k, v] of Object.entries(spec))
        facets[k] = Array.isArray(v) ? idFirst(v as Doc[]) : v;
      return { $facet: facets };
    }
    if (name === '$lookup' && Array.isArray(spec['pipeline'])) {
      return { $lookup: { ...spec, pipeline: idFirst(spec['pipeline'] as Doc[]) } };
    }
    return stage;
  });
}

const aggregate: CommandHandler = {
  read: true,
  write: true,
  fields: [
    'pipeline',
    'cursor',
    'explain',
    'allowDiskUse',
    'bypassDocumentValidation',
    'collation',
    'hint',
    'let',
  ],
  run(ctx) {
    const target = ctx.cmd['aggregate'];
    refuseUnsupported(ctx, 'collation', 'explain');
    const pipeline = optionalArray(ctx, 'pipeline');
    if (!pipeline)
      throw new MongoServerError(
        'Location40414',
        "BSON field 'aggregate.pipeline' is missing but a required field",
      );
    const cursorSpec = optionalDoc(ctx, 'cursor');
    if (!cursorSpec) {
      throw new MongoServerError(
        'FailedToParse',
        "The 'cursor' option is required, except for aggregate with the explain argument",
      );
    }
    for (const k of Object.keys(cursorSpec)) {
      if (k !== 'batchSize')
        throw new MongoServerError(
          'Location40415',
          `BSON field 'aggregate.cursor.${k}' is an unknown field.`,
        );
    }
    const batchSize = optionalInt(
      { ...ctx, name: 'aggregate.cursor', cmd: cursorSpec },
      'batchSize',
    );
    checkPipeline(pipeline);
    const variables = letVariables(optionalDoc(ctx, 'let'));
    let input: StoredRecord[] = [];
    let name: string;
    if (typeof target === 'string') {
      name = collectionName(ctx);
      const coll = ctx.store.collection(ctx.db, name);
      const natural = checkHint(coll, ctx.cmd['hint']);
      // Use an index for a leading $match, as mongod does.
      const first = pipeline[0] as Doc | undefined;
      if (first && isPlainObject(first['$match']))
        input = findRecords(coll, first['$match'], { variables, natural });
      else {
        input = coll ? [...coll.records] : [];
        if (natural === -1) input.reverse();
      }
    } else if (num(target) === 1) {
      name = '$cmd.aggregate';
      const first = pipeline[0] as Doc | undefined;
      if (!first || !('$documents' in first)) {
        throw new MongoServerError(
          'InvalidNamespace',
          '{aggregate: 1} is only valid with a $documents stage, which this server does not support',
        );
      }
    } else {
      throw new MongoServerError(
        'FailedToParse',
        'Invalid {aggregate: ...} value: must be a collection name or 1',
      );
    }
    // Input records by view; a result that is one of them is decoded from its bytes.
    // (Views are decoded from the records' bytes once, here: mingo runs on them.)
    const views = input.map((r) => r.view);
    const byView = new Map<Doc, StoredRecord>();
    input.forEach((r, i) => byView.set(views[i] as Doc, r));
    const cache = new Map<string, Doc[]>();
    const resolve = (coll: string): Doc[] => {
      let docs = cache.get(coll);
      if (!docs) {
        const c = ctx.store.collection(ctx.db, coll);
        docs = c ? [...c.records].map((r) => r.view) : [];
        cache.set(coll, docs);
      }
      return docs;
    };
    const out = runPipeline(views, idFirst(toView(pipeline) as Doc[]), resolve, variables);
    // Unchanged input documents (e.g. after $match/$sort/$limit) keep their BSON types exactly.
    const docs = out.map((d) => byView.get(d)?.doc ?? (retype(d, undefined) as Doc));
    const ns = `${ctx.db}.${name}`;
    const { batch, id } = ctx.cursors.open(ns, docs, batchSize, false);
    return { cursor: { firstBatch: batch, id, ns }, ok: 1 };
  },
};

export const crudCommands: Record<string, CommandHandler> = {
  find,
  getMore,
  killCursors,
  insert,
  update,
  delete: del,
  findAndModify,
  findandmodify: findAndModify,
  count,
  distinct,
  aggregate,
};

export { typeName };

/** A command's `let`, evaluated once (MongoDB evaluates it before running the command). */
function letVariables(letDoc: Doc | undefined): Doc | undefined {
  return letDoc && evaluateLet(toView(letDoc) as Doc);
}

/** A statement of an update or delete batch as mongod checks it: known fields, `q` a document. */
function checkStatement(path: string, s: Doc, allowed: ReadonlySet<string>): void {
  for (const k of Object.keys(s)) {
    if (!allowed.has(k)) {
      throw new MongoServerError('Location40415', `BSON field '${path}.${k}' is an unknown field.`);
    }
  }
  if (!isPlainObject(s['q']))
    throw new MongoServerError(
      'TypeMismatch',
      `BSON field '${path}.q' is the wrong type, expected type 'object'`,
    );
}
