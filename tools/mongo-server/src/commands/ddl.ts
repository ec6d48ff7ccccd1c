// Collections, databases and indexes. https://www.mongodb.com/docs/manual/reference/command/nav-administration/
import { compileFilter } from '../engine';
import { MongoServerError } from '../errors';
import type { IndexSpec } from '../indexes';
import { validateDbName, validateNamespace } from '../store';
import { isPlainObject, num, toView, type Doc } from '../values';
import {
  collectionName,
  optionalBool,
  optionalDoc,
  refuseUnsupported,
  wrongType,
  type CommandHandler,
} from './context';

const create: CommandHandler = {
  write: true,
  fields: [
    'capped',
    'size',
    'max',
    'validator',
    'validationLevel',
    'validationAction',
    'collation',
    'timeseries',
    'clusteredIndex',
    'changeStreamPreAndPostImages',
    'expireAfterSeconds',
    'viewOn',
    'pipeline',
    'storageEngine',
    'indexOptionDefaults',
    'encryptedFields',
    'idIndex',
    'autoIndexId',
  ],
  run(ctx) {
    const name = collectionName(ctx);
    refuseUnsupported(
      ctx,
      'capped',
      'size',
      'max',
      'validator',
      'collation',
      'timeseries',
      'clusteredIndex',
      'changeStreamPreAndPostImages',
      'expireAfterSeconds',
      'viewOn',
      'pipeline',
      'storageEngine',
      'indexOptionDefaults',
      'encryptedFields',
    );
    // Every collection has the {_id: 1} index; an idIndex describing exactly it is honoured as is,
    // any other (a collation, other options) and autoIndexId: false are refused by name.
    const idIndex = ctx.cmd['idIndex'];
    if (idIndex !== undefined) {
      const ok =
        isPlainObject(idIndex) &&
        Object.keys(idIndex).every((k) => ['key', 'name', 'v'].includes(k)) &&
        isPlainObject(idIndex['key']) &&
        Object.keys(idIndex['key']).join() === '_id' &&
        num(idIndex['key']['_id']) === 1 &&
        (idIndex['name'] === undefined || idIndex['name'] === '_id_');
      if (!ok)
        throw new MongoServerError(
          'BadValue',
          "'create.idIndex' other than {key: {_id: 1}, name: '_id_'} is not supported by this server",
        );
    }
    if (ctx.cmd['autoIndexId'] !== undefined && optionalBool(ctx, 'autoIndexId') === false) {
      throw new MongoServerError(
        'BadValue',
        "'create.autoIndexId' false is not supported by this server",
      );
    }
    for (const f of ['validationLevel', 'validationAction']) {
      // Without a validator these have no effect in MongoDB either; other values would.
      const v = ctx.cmd[f];
      if (
        v !== undefined &&
        v !== 'off' &&
        v !== 'strict' &&
        v !== 'error' &&
        v !== 'warn' &&
        v !== 'moderate'
      ) {
        throw new MongoServerError('BadValue', `Invalid ${f}: ${String(v)}`);
      }
    }
    validateNamespace(ctx.db, name);
    if (ctx.store.collection(ctx.db, name)) {
      throw new MongoServerError('NamespaceExists', `Collection ${ctx.db}.${name} already exists.`);
    }
    ctx.store.ensureCollection(ctx.db, name);
    return { ok: 1 };
  },
};

const drop: CommandHandler = {
  write: true,
  fields: [],
  run(ctx) {
    const name = collectionName(ctx);
    const coll = ctx.store.dropCollection(ctx.db, name);
    const ns = `${ctx.db}.${name}`;
    ctx.cursors.killNamespace((n) => n === ns);
    // Since MongoDB 7.0 dropping a missing collection succeeds.
    return coll ? { nIndexesWas: coll.indexes.size, ns, ok: 1 } : { ok: 1 };
  },
};

const dropDatabase: CommandHandler = {
  write: true,
  fields: [],
  run(ctx) {
    validateDbName(ctx.db);
    ctx.store.dropDatabase(ctx.db);
    ctx.cursors.killNamespace((n) => n.startsWith(`${ctx.db}.`));
    return { dropped: ctx.db, ok: 1 };
  },
};

const listCollections: CommandHandler = {
  read: true,
  fields: ['filter', 'nameOnly', 'authorizedCollections', 'cursor'],
  run(ctx) {
    const filter = optionalDoc(ctx, 'filter') ?? {};
    const nameOnly = optionalBool(ctx, 'nameOnly') ?? false;
    const batchSize = num(optionalDoc(ctx, 'cursor')?.['batchSize']);
    const match = compileFilter(toView(filter) as Doc);
    const entries: Doc[] = [];
    for (const coll of ctx.store.databases.get(ctx.db)?.values() ?? []) {
      const full: Doc = {
        name: coll.name,
        type: 'collection',
        options: coll.options,
        info: { readOnly: false, uuid: coll.uuid },
        idIndex: { v: 2, key: { _id: 1 }, name: '_id_' },
      };
      if (!match(toView(full) as Doc)) continue;
      entries.push(nameOnly ? { name: coll.name, type: 'collection' } : full);
    }
    const ns = `${ctx.db}.$cmd.listCollections`;
    const { batch, id } = ctx.cursors.open(ns, entries, batchSize, false);
    return { cursor: { id, ns, firstBatch: batch }, ok: 1 };
  },
};

const listDatabases: CommandHandler = {
  fields: ['filter', 'nameOnly', 'authorizedDatabases'],
  run(ctx) {
    if (ctx.db !== 'admin')
      throw new MongoServerError(
        'Unauthorized',
        'listDatabases may only be run against the admin database.',
      );
    const filter = optionalDoc(ctx, 'filter') ?? {};
    const nameOnly = optionalBool(ctx, 'nameOnly') ?? false;
    const match = compileFilter(toView(filter) as Doc);
    const databases: Doc[] = [];
    let totalSize = 0;
    for (const [name, colls] of ctx.store.databases) {
      let size = 0;
      // The bytes as stored, loaded or not: sizes need no collection loaded (Collection.deferLoad).
      for (const c of colls.values()) for (const raw of c.rawsToSnapshot()) size += raw.length;
      const entry = { name, sizeOnDisk: size, empty: size === 0 };
      if (!match(entry)) continue;
      totalSize += size;
      databases.push(nameOnly ? { name } : entry);
    }
    return nameOnly
      ? { databases, ok: 1 }
      : { databases, totalSize, totalSizeMb: Math.floor(totalSize / 1048576), ok: 1 };
  },
};

/** Index options this server implements (or accepts as no-ops, as `background`). */
const SUPPORTED_INDEX_OPTIONS = [
  'key',
  'name',
  'unique',
  'sparse',
  'partialFilterExpression',
  'expireAfterSeconds',
  'background',
  'v',
  'ns',
  'dropDups',
];
/** Options mongod knows and this server refuses when set (see parseIndexSpec). */
const UNSUPPORTED_INDEX_OPTIONS = [
  'hidden',
  'collation',
  'weights',
  'default_language',
  'language_override',
  'textIndexVersion',
  '2dsphereIndexVersion',
  'bits',
  'min',
  'max',
  'wildcardProjection',
  'storageEngine',
];
const INDEX_FIELDS = new Set([...SUPPORTED_INDEX_OPTIONS, ...UNSUPPORTED_INDEX_OPTIONS]);

function parseIndexSpec(given: unknown, ignoreUnknown = false): IndexSpec {
  if (!isPlainObject(given))
    throw new MongoServerError('TypeMismatch', 'Index specifications must be objects');
  let raw: Doc = given;
  // ignoreUnknownIndexOptions: mongod drops the options it does not know instead of failing.
  if (ignoreUnknown)
    raw = Object.fromEntries(Object.entries(given).filter(([k]) => INDEX_FIELDS.has(k)));
  for (const k of Object.keys(raw)) {
    if (!INDEX_FIELDS.has(k)) {
      throw new MongoServerError(
        'InvalidIndexSpecificationOption',
        `The field '${k}' is not valid for an index specification. Specification: ${JSON.stringify(toView(raw))}`,
      );
    }
  }
  for (const k of UNSUPPORTED_INDEX_OPTIONS) {
    const v = raw[k];
    if (v !== undefined && v !== false) {
      throw new MongoServerError(
        'CannotCreateIndex',
        `index option '${k}' is not supported by this server`,
      );
    }
  }
  const key = raw['key'];
  if (!isPlainObject(key) || Object.keys(key).length === 0) {
    throw new MongoServerError(
      'CannotCreateIndex',
      "The 'key' field of an index specification must be a non-empty object",
    );
  }
  const normalized: Doc = {};
  for (const [field, dir] of Object.entries(key)) {
    const n = num(dir);
    if (n !== 1 && n !== -1) {
      throw new MongoServerError(
        'CannotCreateIndex',
        typeof dir === 'string'
          ? `Index type '${dir}' on field '${field}' is not supported by this server`
          : `Values in the index key pattern can only be 1 or -1, found ${String(toView(dir))} for '${field}'`,
      );
    }
    if (field === '' || field.startsWith('$') || field.split('.').some((p) => p === '')) {
      throw new MongoServerError(
        'CannotCreateIndex',
        `Index key contains an illegal field name: '${field}'`,
      );
    }
    normalized[field] = dir;
  }
  const name =
    raw['name'] ??
    Object.entries(key)
      .map(([f, d]) => `${f}_${String(num(d))}`)
      .join('_');
  if (typeof name !== 'string' || !name)
    throw new MongoServerError('CannotCreateIndex', 'The index name must be a non-empty string');
  const spec: IndexSpec = { v: 2, key: normalized, name };
  const unique = raw['unique'];
  if (
    unique !== undefined &&
    unique !== null &&
    (typeof unique === 'boolean' ? unique : num(unique) !== 0)
  )
    spec.unique = true;
  const sparse = raw['sparse'];
  if (
    sparse !== undefined &&
    sparse !== null &&
    (typeof sparse === 'boolean' ? sparse : num(sparse) !== 0)
  )
    spec.sparse = true;
  if (raw['partialFilterExpression'] !== undefined) {
    if (!isPlainObject(raw['partialFilterExpression']))
      throw new MongoServerError('TypeMismatch', 'partialFilterExpression must be an object');
    if (spec.sparse)
      throw new MongoServerError(
        'CannotCreateIndex',
        'cannot mix "partialFilterExpression" and "sparse" options',
      );
    spec.partialFilterExpression = raw['partialFilterExpression'];
  }
  if (raw['expireAfterSeconds'] !== undefined) {
    const secs = num(raw['expireAfterSeconds']);
    if (secs === undefined || secs < 0)
      throw new MongoServerError(
        'CannotCreateIndex',
        'expireAfterSeconds must be a non-negative number',
      );
    if (Object.keys(normalized).length !== 1)
      throw new MongoServerError(
        'CannotCreateIndex',
        'TTL indexes are single-field indexes, compound indexes do not support TTL',
      );
    spec.expireAfterSeconds = secs;
  }
  if (name === '_id_' && !(Object.keys(normalized).length === 1 && '_id' in normalized)) {
    throw new MongoServerError('BadValue', "The index name '_id_' is reserved for the _id index");
  }
  if (
    name === '_id_' ||
    (Object.keys(normalized).length === 1 && '_id' in normalized && !spec.partialFilterExpression)
  ) {
    // {_id: 1} is the built-in unique index; asking for it again (under its own name) is a no-op.
    spec.name = '_id_';
    delete spec.unique;
  }
  return spec;
}

const createIndexes: CommandHandler = {
  write: true,
  fields: ['indexes', 'commitQuorum', 'ignoreUnknownIndexOptions'],
  run(ctx) {
    const name = collectionName(ctx);
    const raw = ctx.cmd['indexes'];
    if (!Array.isArray(raw)) throw wrongType(ctx, 'indexes', raw, 'array');
    if (raw.length === 0)
      throw new MongoServerError('BadValue', 'Must specify at least one index to create');
    if (ctx.cmd['commitQuorum'] !== undefined) {
      throw new MongoServerError('BadValue', "Standalones can't specify commitQuorum");
    }
    const ignoreUnknown = optionalBool(ctx, 'ignoreUnknownIndexOptions') ?? false;
    const specs = raw.map((r) => parseIndexSpec(r, ignoreUnknown));
    const existed = ctx.store.collection(ctx.db, name) !== undefined;
    const coll = ctx.store.ensureCollection(ctx.db, name);
    const before = coll.indexes.size;
    let created = 0;
    for (const spec of specs) {
      if (spec.name === '_id_') continue;
      if (coll.createIndex(spec)) created++;
    }
    return {
      numIndexesBefore: before,
      numIndexesAfter: coll.indexes.size,
      createdCollectionAutomatically: !existed,
      ...(created === 0 ? { note: 'all indexes already exist' } : {}),
      ok: 1,
    };
  },
};

const listIndexes: CommandHandler = {
  read: true,
  fields: ['cursor'],
  run(ctx) {
    const name = collectionName(ctx);
    const coll = ctx.store.collection(ctx.db, name);
    if (!coll)
      throw new MongoServerError('NamespaceNotFound', `ns does not exist: ${ctx.db}.${name}`);
    const batchSize = num(optionalDoc(ctx, 'cursor')?.['batchSize']);
    const specs = [...coll.indexes.values()].map((i) => ({ ...i.spec }) as Doc);
    const ns = coll.ns;
    const { batch, id } = ctx.cursors.open(ns, specs, batchSize, false);
    return { cursor: { id, ns, firstBatch: batch }, ok: 1 };
  },
};

const dropIndexes: CommandHandler = {
  write: true,
  fields: ['index'],
  run(ctx) {
    const name = collectionName(ctx);
    const coll = ctx.store.collection(ctx.db, name);
    if (!coll) throw new MongoServerError('NamespaceNotFound', `ns not found ${ctx.db}.${name}`);
    const target = ctx.cmd['index'];
    const before = coll.indexes.size;
    const dropOne = (indexName: string): void => {
      if (indexName === '_id_')
        throw new MongoServerError('InvalidOptions', 'cannot drop _id index');
      if (!coll.dropIndex(indexName)) {
        throw new MongoServerError('IndexNotFound', `index not found with name [${indexName}]`);
      }
    };
    if (target === '*') {
      for (const n of [...coll.indexes.keys()]) if (n !== '_id_') coll.dropIndex(n);
    } else if (typeof target === 'string') dropOne(target);
    else if (Array.isArray(target)) {
      for (const n of target) if (typeof n !== 'string') throw wrongType(ctx, 'index', n, 'string');
      for (const n of target as string[])
        if (!coll.indexes.has(n))
          throw new MongoServerError('IndexNotFound', `index not found with name [${n}]`);
      for (const n of target as string[]) dropOne(n);
    } else if (isPlainObject(target)) {
      const wanted = JSON.stringify(toView(target));
      const found = [...coll.indexes.values()].find(
        (i) => JSON.stringify(toView(i.spec.key)) === wanted,
      );
      if (!found)
        throw new MongoServerError('IndexNotFound', `can't find index with key: ${wanted}`);
      dropOne(found.name);
    } else throw wrongType(ctx, 'index', target, 'string, object, array');
    return { nIndexesWas: before, ok: 1 };
  },
};

export const ddlCommands: Record<string, CommandHandler> = {
  create,
  drop,
  dropDatabase,
  listCollections,
  listDatabases,
  createIndexes,
  listIndexes,
  dropIndexes,
};
