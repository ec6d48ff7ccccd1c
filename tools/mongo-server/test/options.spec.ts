// Every field the CRUD, cursor and index commands accept on MongoDB 8.0 (the version this server
// claims), sent one at a time with a value that would change the outcome: each is either honoured
// (the reply or the stored state shows its effect, or, for fields that change nothing on a
// standalone server such as `comment`, the result equals the one without it) or refused with an
// error whose message names it. Never silently ignored. Field lists from the MongoDB 8.0 manual's
// command pages: https://www.mongodb.com/docs/manual/reference/command/find/ , .../insert/ ,
// .../update/ , .../delete/ , .../findAndModify/ , .../aggregate/ , .../count/ , .../distinct/ ,
// .../getMore/ , .../createIndexes/
import { Long, type Document } from 'mongodb';
import { cursorId, startWithDriver, stopHarness, type DriverHarness } from './helpers';

type Reply = Document;
type Outcome = { ok: true; reply: Reply } | { ok: false; code: number; message: string };

interface Case {
  /** The field under test, as the command takes it (statement fields as `updates.<f>` etc.). */
  option: string;
  cmd: () => Document;
  /** Honoured: what the reply (and the collection afterwards) must show. */
  honoured?: (reply: Reply, h: DriverHarness) => Promise<void> | void;
  /** Refused: the error code expected; the message must name the option (or `names`). */
  refused?: number;
  names?: string;
}

const ids = (docs: Document[]): unknown[] => docs.map((d) => d['_id']);
const first = (r: Reply): Document[] => (r['cursor'] as Document)['firstBatch'] as Document[];
const all = async (h: DriverHarness): Promise<Document[]> =>
  h.db
    .collection('c')
    .find({}, { sort: { _id: 1 } })
    .toArray();

const FIND: Case[] = [
  {
    option: 'filter',
    cmd: () => ({ find: 'c', filter: { a: { $gt: 3 } } }),
    honoured: (r) => expect(ids(first(r))).toEqual([4, 5]),
  },
  {
    option: 'sort',
    cmd: () => ({ find: 'c', sort: { a: -1 } }),
    honoured: (r) => expect(ids(first(r))).toEqual([5, 4, 3, 2, 1]),
  },
  {
    option: 'projection',
    cmd: () => ({ find: 'c', projection: { a: 0 } }),
    honoured: (r) => expect(first(r)[0]).toEqual({ _id: 1 }),
  },
  {
    option: 'hint',
    cmd: () => ({ find: 'c', hint: { a: 1 }, filter: { a: 2 } }),
    honoured: (r) => expect(ids(first(r))).toEqual([2]),
  },
  { option: 'hint', cmd: () => ({ find: 'c', hint: 'no_such_index' }), refused: 2 },
  {
    option: 'skip',
    cmd: () => ({ find: 'c', skip: 3 }),
    honoured: (r) => expect(ids(first(r))).toEqual([4, 5]),
  },
  {
    option: 'limit',
    cmd: () => ({ find: 'c', limit: 2 }),
    honoured: (r) => expect(ids(first(r))).toEqual([1, 2]),
  },
  {
    option: 'batchSize',
    cmd: () => ({ find: 'c', batchSize: 2 }),
    honoured: (r) => {
      expect(first(r)).toHaveLength(2);
      expect(cursorId(r).isZero()).toBe(false);
    },
  },
  {
    option: 'singleBatch',
    cmd: () => ({ find: 'c', batchSize: 2, singleBatch: true }),
    honoured: (r) => {
      expect(first(r)).toHaveLength(2);
      expect(cursorId(r).isZero()).toBe(true);
    },
  },
  {
    option: 'comment',
    cmd: () => ({ find: 'c', comment: 'why' }),
    honoured: (r) => expect(first(r)).toHaveLength(5),
  },
  {
    option: 'maxTimeMS',
    cmd: () => ({ find: 'c', maxTimeMS: 60_000 }),
    honoured: (r) => expect(first(r)).toHaveLength(5),
  },
  {
    option: 'readConcern',
    cmd: () => ({ find: 'c', readConcern: { level: 'majority' } }),
    honoured: (r) => expect(first(r)).toHaveLength(5),
  },
  {
    option: 'readConcern',
    cmd: () => ({ find: 'c', readConcern: { level: 'snapshot' } }),
    refused: 72,
  },
  { option: 'max', cmd: () => ({ find: 'c', hint: { a: 1 }, max: { a: 3 } }), refused: 2 },
  { option: 'min', cmd: () => ({ find: 'c', hint: { a: 1 }, min: { a: 3 } }), refused: 2 },
  { option: 'returnKey', cmd: () => ({ find: 'c', returnKey: true }), refused: 2 },
  { option: 'showRecordId', cmd: () => ({ find: 'c', showRecordId: true }), refused: 2 },
  { option: 'tailable', cmd: () => ({ find: 'c', tailable: true }), refused: 2 },
  { option: 'awaitData', cmd: () => ({ find: 'c', awaitData: true }), refused: 2 },
  {
    option: 'oplogReplay',
    cmd: () => ({ find: 'c', oplogReplay: true }),
    // find: "the server accepts the flag for backwards compatibility, but the flag has no effect".
    honoured: (r) => expect(first(r)).toHaveLength(5),
  },
  {
    option: 'noCursorTimeout',
    cmd: () => ({ find: 'c', batchSize: 1, noCursorTimeout: true }),
    honoured: (r) => expect(cursorId(r).isZero()).toBe(false),
  },
  {
    option: 'allowPartialResults',
    cmd: () => ({ find: 'c', allowPartialResults: true }),
    honoured: (r) => expect(first(r)).toHaveLength(5),
  },
  { option: 'collation', cmd: () => ({ find: 'c', collation: { locale: 'fr' } }), refused: 2 },
  {
    option: 'collation',
    cmd: () => ({ find: 'c', collation: { locale: 'simple' } }),
    honoured: (r) => expect(first(r)).toHaveLength(5),
  },
  {
    option: 'allowDiskUse',
    cmd: () => ({ find: 'c', allowDiskUse: true, sort: { a: -1 } }),
    honoured: (r) => expect(ids(first(r))[0]).toBe(5),
  },
  {
    option: 'let',
    cmd: () => ({
      find: 'c',
      filter: { $expr: { $eq: ['$a', '$$x'] } },
      let: { x: { $add: [1, 2] } },
    }),
    honoured: (r) => expect(ids(first(r))).toEqual([3]),
  },
];

const INSERT: Case[] = [
  {
    option: 'documents',
    cmd: () => ({ insert: 'c', documents: [{ _id: 6 }] }),
    honoured: async (r, h) => {
      expect(r['n']).toBe(1);
      expect(ids(await all(h))).toContain(6);
    },
  },
  {
    option: 'ordered',
    cmd: () => ({ insert: 'c', documents: [{ _id: 1 }, { _id: 7 }], ordered: false }),
    honoured: async (r, h) => {
      expect(r['n']).toBe(1);
      expect(r['writeErrors']).toHaveLength(1);
      expect(ids(await all(h))).toContain(7);
    },
  },
  {
    option: 'bypassDocumentValidation',
    cmd: () => ({ insert: 'c', documents: [{ _id: 8 }], bypassDocumentValidation: true }),
    honoured: (r) => expect(r['n']).toBe(1),
  },
  {
    option: 'comment',
    cmd: () => ({ insert: 'c', documents: [{ _id: 9 }], comment: 'why' }),
    honoured: (r) => expect(r['n']).toBe(1),
  },
  {
    option: 'writeConcern',
    cmd: () => ({
      insert: 'c',
      documents: [{ _id: 10 }],
      writeConcern: { w: 'majority', wtimeout: 100 },
    }),
    honoured: (r) => expect(r['n']).toBe(1),
  },
  // Without a data file there is nothing to journal: refused as by a mongod without journaling
  // (test/persistence.spec.ts shows j: true honoured with a data file).
  {
    option: 'writeConcern',
    cmd: () => ({ insert: 'c', documents: [{ _id: 12 }], writeConcern: { j: true } }),
    refused: 2,
    names: "'j'",
  },
  {
    option: 'writeConcern',
    cmd: () => ({ insert: 'c', documents: [{ _id: 13 }], writeConcern: { fsync: true } }),
    refused: 2,
    names: "'fsync'",
  },
  {
    option: 'writeConcern',
    cmd: () => ({ insert: 'c', documents: [{ _id: 11 }], writeConcern: { w: 2 } }),
    refused: 100,
    names: 'write concern',
  },
];

const upd = (statement: Document, extra: Document = {}): Document => ({
  update: 'c',
  updates: [{ q: { _id: 1 }, u: { $set: { b: 1 } }, ...statement }],
  ...extra,
});

const UPDATE: Case[] = [
  {
    option: 'updates.q',
    cmd: () => upd({ q: { a: 2 } }),
    honoured: async (_r, h) => expect((await all(h))[1]).toMatchObject({ _id: 2, b: 1 }),
  },
  {
    option: 'updates.u',
    cmd: () => upd({ u: { $inc: { a: 10 } } }),
    honoured: async (_r, h) => expect((await all(h))[0]).toEqual({ _id: 1, a: 11 }),
  },
  {
    option: 'updates.c',
    cmd: () => upd({ u: [{ $set: { b: '$$k' } }], c: { k: 'const' } }),
    honoured: async (_r, h) => expect((await all(h))[0]).toMatchObject({ b: 'const' }),
  },
  {
    option: 'updates.upsert',
    cmd: () => upd({ q: { _id: 99 }, upsert: true }),
    honoured: async (r, h) => {
      expect(r['upserted']).toEqual([{ index: 0, _id: 99 }]);
      expect(ids(await all(h))).toContain(99);
    },
  },
  {
    option: 'updates.multi',
    cmd: () => upd({ q: {}, multi: true }),
    honoured: (r) => expect(r['nModified']).toBe(5),
  },
  { option: 'updates.collation', cmd: () => upd({ collation: { locale: 'fr' } }), refused: 2 },
  {
    option: 'updates.arrayFilters',
    cmd: () => ({
      update: 'c',
      updates: [
        { q: { _id: 5 }, u: { $set: { 'arr.$[e]': 0 } }, arrayFilters: [{ e: { $gt: 1 } }] },
      ],
    }),
    honoured: async (_r, h) => expect((await all(h))[4]).toMatchObject({ arr: [1, 0, 0] }),
  },
  {
    option: 'updates.hint',
    cmd: () => upd({ hint: { a: 1 } }),
    honoured: (r) => expect(r['nModified']).toBe(1),
  },
  { option: 'updates.hint', cmd: () => upd({ hint: 'no_such_index' }), refused: 2 },
  {
    option: 'updates.sort',
    cmd: () => upd({ q: {}, sort: { a: -1 } }),
    honoured: async (_r, h) => expect((await all(h))[4]).toMatchObject({ _id: 5, b: 1 }),
  },
  { option: 'updates.sort', cmd: () => upd({ q: {}, sort: { a: -1 }, multi: true }), refused: 9 },
  {
    option: 'ordered',
    cmd: () => ({
      update: 'c',
      ordered: false,
      updates: [
        { q: { _id: 1 }, u: { $inc: { a: 'x' } } },
        { q: { _id: 2 }, u: { $set: { b: 1 } } },
      ],
    }),
    honoured: (r) => {
      expect(r['nModified']).toBe(1);
      expect(r['writeErrors']).toHaveLength(1);
    },
  },
  {
    option: 'bypassDocumentValidation',
    cmd: () => upd({}, { bypassDocumentValidation: true }),
    honoured: (r) => expect(r['nModified']).toBe(1),
  },
  {
    option: 'let',
    cmd: () => upd({ u: [{ $set: { b: '$$v' } }] }, { let: { v: { $multiply: [2, 3] } } }),
    honoured: async (_r, h) => expect((await all(h))[0]).toMatchObject({ b: 6 }),
  },
  {
    option: 'comment',
    cmd: () => upd({}, { comment: 'why' }),
    honoured: (r) => expect(r['nModified']).toBe(1),
  },
  {
    option: 'writeConcern',
    cmd: () => upd({}, { writeConcern: { w: 1 } }),
    honoured: (r) => expect(r['nModified']).toBe(1),
  },
];

const del = (statement: Document, extra: Document = {}): Document => ({
  delete: 'c',
  deletes: [{ q: { _id: 1 }, limit: 1, ...statement }],
  ...extra,
});

const DELETE: Case[] = [
  {
    option: 'deletes.q',
    cmd: () => del({ q: { a: { $gte: 4 } }, limit: 0 }),
    honoured: async (r, h) => {
      expect(r['n']).toBe(2);
      expect(ids(await all(h))).toEqual([1, 2, 3]);
    },
  },
  {
    option: 'deletes.limit',
    cmd: () => del({ q: {}, limit: 1 }),
    honoured: (r) => expect(r['n']).toBe(1),
  },
  { option: 'deletes.collation', cmd: () => del({ collation: { locale: 'fr' } }), refused: 2 },
  {
    option: 'deletes.hint',
    cmd: () => del({ hint: { a: 1 } }),
    honoured: (r) => expect(r['n']).toBe(1),
  },
  { option: 'deletes.hint', cmd: () => del({ hint: 'no_such_index' }), refused: 2 },
  {
    option: 'ordered',
    cmd: () => ({
      delete: 'c',
      ordered: false,
      deletes: [
        { q: { _id: 1 }, limit: 0 },
        { q: { _id: 2 }, limit: 0 },
      ],
    }),
    honoured: (r) => expect(r['n']).toBe(2),
  },
  {
    option: 'let',
    cmd: () => del({ q: { $expr: { $eq: ['$a', '$$x'] } } }, { let: { x: 4 } }),
    honoured: async (_r, h) => expect(ids(await all(h))).toEqual([1, 2, 3, 5]),
  },
  {
    option: 'comment',
    cmd: () => del({}, { comment: 'why' }),
    honoured: (r) => expect(r['n']).toBe(1),
  },
  {
    option: 'writeConcern',
    cmd: () => del({}, { writeConcern: { w: 0 } }),
    honoured: async (_r, h) => expect(ids(await all(h))).not.toContain(1),
  },
];

const fam = (extra: Document): Document => ({
  findAndModify: 'c',
  query: { _id: 1 },
  update: { $set: { b: 1 } },
  ...extra,
});
const value = (r: Reply): Document | null => r['value'] as Document | null;

const FIND_AND_MODIFY: Case[] = [
  {
    option: 'query',
    cmd: () => fam({ query: { a: 3 } }),
    honoured: (r) => expect(value(r)).toEqual({ _id: 3, a: 3 }),
  },
  {
    option: 'sort',
    cmd: () => fam({ query: {}, sort: { a: -1 } }),
    honoured: (r) => expect(value(r)?.['_id']).toBe(5),
  },
  {
    option: 'remove',
    cmd: () => ({ findAndModify: 'c', query: { _id: 2 }, remove: true }),
    honoured: async (_r, h) => expect(ids(await all(h))).not.toContain(2),
  },
  {
    option: 'update',
    cmd: () => fam({ update: [{ $set: { b: { $add: ['$a', 1] } } }] }),
    honoured: async (_r, h) => expect((await all(h))[0]).toMatchObject({ b: 2 }),
  },
  {
    option: 'new',
    cmd: () => fam({ new: true }),
    honoured: (r) => expect(value(r)).toEqual({ _id: 1, a: 1, b: 1 }),
  },
  {
    option: 'fields',
    cmd: () => fam({ fields: { a: 0 } }),
    honoured: (r) => expect(value(r)).toEqual({ _id: 1 }),
  },
  {
    option: 'upsert',
    cmd: () => fam({ query: { _id: 42 }, upsert: true, new: true }),
    honoured: (r) => expect(value(r)).toEqual({ _id: 42, b: 1 }),
  },
  {
    option: 'bypassDocumentValidation',
    cmd: () => fam({ bypassDocumentValidation: true }),
    honoured: (r) => expect(value(r)?.['_id']).toBe(1),
  },
  {
    option: 'writeConcern',
    cmd: () => fam({ writeConcern: { w: 1 } }),
    honoured: (r) => expect(value(r)?.['_id']).toBe(1),
  },
  {
    option: 'maxTimeMS',
    cmd: () => fam({ maxTimeMS: 60_000 }),
    honoured: (r) => expect(value(r)?.['_id']).toBe(1),
  },
  { option: 'collation', cmd: () => fam({ collation: { locale: 'fr' } }), refused: 2 },
  {
    option: 'arrayFilters',
    cmd: () =>
      fam({
        query: { _id: 5 },
        update: { $set: { 'arr.$[e]': 0 } },
        arrayFilters: [{ e: 1 }],
        new: true,
      }),
    honoured: (r) => expect(value(r)).toMatchObject({ arr: [0, 2, 3] }),
  },
  { option: 'hint', cmd: () => fam({ hint: 'no_such_index' }), refused: 2 },
  {
    option: 'hint',
    cmd: () => fam({ hint: { a: 1 } }),
    honoured: (r) => expect(value(r)?.['_id']).toBe(1),
  },
  {
    option: 'comment',
    cmd: () => fam({ comment: 'why' }),
    honoured: (r) => expect(value(r)?.['_id']).toBe(1),
  },
  {
    option: 'let',
    cmd: () => fam({ query: { $expr: { $eq: ['$a', '$$x'] } }, let: { x: 4 } }),
    honoured: (r) => expect(value(r)?.['_id']).toBe(4),
  },
];

const agg = (extra: Document): Document => ({
  aggregate: 'c',
  pipeline: [{ $match: { a: { $lte: 2 } } }],
  cursor: {},
  ...extra,
});

const AGGREGATE: Case[] = [
  {
    option: 'pipeline',
    cmd: () => agg({}),
    honoured: (r) => expect(ids(first(r))).toEqual([1, 2]),
  },
  {
    option: 'cursor',
    cmd: () => agg({ cursor: { batchSize: 1 } }),
    honoured: (r) => expect(first(r)).toHaveLength(1),
  },
  { option: 'explain', cmd: () => agg({ explain: true, cursor: undefined }), refused: 2 },
  {
    option: 'allowDiskUse',
    cmd: () => agg({ allowDiskUse: true }),
    honoured: (r) => expect(first(r)).toHaveLength(2),
  },
  {
    option: 'maxTimeMS',
    cmd: () => agg({ maxTimeMS: 60_000 }),
    honoured: (r) => expect(first(r)).toHaveLength(2),
  },
  {
    option: 'bypassDocumentValidation',
    cmd: () => agg({ bypassDocumentValidation: true }),
    honoured: (r) => expect(first(r)).toHaveLength(2),
  },
  {
    option: 'readConcern',
    cmd: () => agg({ readConcern: { level: 'local' } }),
    honoured: (r) => expect(first(r)).toHaveLength(2),
  },
  { option: 'collation', cmd: () => agg({ collation: { locale: 'fr' } }), refused: 2 },
  { option: 'hint', cmd: () => agg({ hint: 'no_such_index' }), refused: 2 },
  {
    option: 'hint',
    cmd: () => agg({ hint: { a: 1 } }),
    honoured: (r) => expect(first(r)).toHaveLength(2),
  },
  {
    option: 'comment',
    cmd: () => agg({ comment: 'why' }),
    honoured: (r) => expect(first(r)).toHaveLength(2),
  },
  {
    option: 'writeConcern',
    cmd: () => agg({ writeConcern: { w: 1 } }),
    honoured: (r) => expect(first(r)).toHaveLength(2),
  },
  {
    option: 'let',
    cmd: () =>
      agg({
        pipeline: [
          { $match: { $expr: { $eq: ['$a', '$$x'] } } },
          { $project: { _id: 1, y: '$$x' } },
        ],
        let: { x: 2 },
      }),
    honoured: (r) => expect(first(r)).toEqual([{ _id: 2, y: 2 }]),
  },
];

const COUNT: Case[] = [
  {
    option: 'query',
    cmd: () => ({ count: 'c', query: { a: { $gt: 1 } } }),
    honoured: (r) => expect(r['n']).toBe(4),
  },
  {
    option: 'limit',
    cmd: () => ({ count: 'c', limit: 2 }),
    honoured: (r) => expect(r['n']).toBe(2),
  },
  { option: 'skip', cmd: () => ({ count: 'c', skip: 4 }), honoured: (r) => expect(r['n']).toBe(1) },
  { option: 'hint', cmd: () => ({ count: 'c', hint: 'no_such_index' }), refused: 2 },
  {
    option: 'readConcern',
    cmd: () => ({ count: 'c', readConcern: { level: 'local' } }),
    honoured: (r) => expect(r['n']).toBe(5),
  },
  { option: 'collation', cmd: () => ({ count: 'c', collation: { locale: 'fr' } }), refused: 2 },
  {
    option: 'comment',
    cmd: () => ({ count: 'c', comment: 'why' }),
    honoured: (r) => expect(r['n']).toBe(5),
  },
  {
    option: 'maxTimeMS',
    cmd: () => ({ count: 'c', maxTimeMS: 60_000 }),
    honoured: (r) => expect(r['n']).toBe(5),
  },
];

const DISTINCT: Case[] = [
  {
    option: 'key',
    cmd: () => ({ distinct: 'c', key: 'a' }),
    honoured: (r) => expect(r['values']).toEqual([1, 2, 3, 4, 5]),
  },
  {
    option: 'query',
    cmd: () => ({ distinct: 'c', key: 'a', query: { a: { $lt: 3 } } }),
    honoured: (r) => expect(r['values']).toEqual([1, 2]),
  },
  {
    option: 'readConcern',
    cmd: () => ({ distinct: 'c', key: 'a', readConcern: { level: 'local' } }),
    honoured: (r) => expect(r['values']).toHaveLength(5),
  },
  {
    option: 'collation',
    cmd: () => ({ distinct: 'c', key: 'a', collation: { locale: 'fr' } }),
    refused: 2,
  },
  {
    option: 'comment',
    cmd: () => ({ distinct: 'c', key: 'a', comment: 'why' }),
    honoured: (r) => expect(r['values']).toHaveLength(5),
  },
  { option: 'hint', cmd: () => ({ distinct: 'c', key: 'a', hint: 'no_such_index' }), refused: 2 },
];

const ix = (spec: Document, extra: Document = {}): Document => ({
  createIndexes: 'c',
  indexes: [{ key: { b: 1 }, name: 'b_1', ...spec }],
  ...extra,
});
const indexNamed = async (h: DriverHarness, name: string): Promise<Document | undefined> =>
  (await h.db.collection('c').listIndexes().toArray()).find((i) => i['name'] === name);

const CREATE_INDEXES: Case[] = [
  {
    option: 'indexes',
    cmd: () => ix({}),
    honoured: async (_r, h) => expect(await indexNamed(h, 'b_1')).toMatchObject({ key: { b: 1 } }),
  },
  {
    option: 'indexes.unique',
    cmd: () => ix({ key: { a: 1, b: 1 }, unique: true }),
    honoured: async (_r, h) => expect(await indexNamed(h, 'b_1')).toMatchObject({ unique: true }),
  },
  {
    option: 'indexes.sparse',
    cmd: () => ix({ sparse: true }),
    honoured: async (_r, h) => expect(await indexNamed(h, 'b_1')).toMatchObject({ sparse: true }),
  },
  {
    option: 'indexes.partialFilterExpression',
    cmd: () => ix({ partialFilterExpression: { a: { $gt: 2 } } }),
    honoured: async (_r, h) =>
      expect(await indexNamed(h, 'b_1')).toMatchObject({
        partialFilterExpression: { a: { $gt: 2 } },
      }),
  },
  {
    option: 'indexes.expireAfterSeconds',
    cmd: () => ix({ expireAfterSeconds: 60 }),
    honoured: async (_r, h) =>
      expect(await indexNamed(h, 'b_1')).toMatchObject({ expireAfterSeconds: 60 }),
  },
  { option: 'indexes.hidden', cmd: () => ix({ hidden: true }), refused: 67 },
  { option: 'indexes.collation', cmd: () => ix({ collation: { locale: 'fr' } }), refused: 67 },
  { option: 'indexes.weights', cmd: () => ix({ weights: { b: 2 } }), refused: 67 },
  {
    option: 'indexes.default_language',
    cmd: () => ix({ default_language: 'english' }),
    refused: 67,
  },
  {
    option: 'indexes.language_override',
    cmd: () => ix({ language_override: 'lang' }),
    refused: 67,
  },
  { option: 'indexes.textIndexVersion', cmd: () => ix({ textIndexVersion: 3 }), refused: 67 },
  {
    option: 'indexes.2dsphereIndexVersion',
    cmd: () => ix({ '2dsphereIndexVersion': 3 }),
    refused: 67,
  },
  { option: 'indexes.bits', cmd: () => ix({ bits: 26 }), refused: 67 },
  { option: 'indexes.min', cmd: () => ix({ min: -10 }), refused: 67 },
  { option: 'indexes.max', cmd: () => ix({ max: 10 }), refused: 67 },
  {
    option: 'indexes.wildcardProjection',
    cmd: () => ix({ wildcardProjection: { a: 1 } }),
    refused: 67,
  },
  {
    option: 'indexes.storageEngine',
    cmd: () => ix({ storageEngine: { wiredTiger: {} } }),
    refused: 67,
  },
  { option: 'indexes.bogusOption', cmd: () => ix({ bogusOption: 1 }), refused: 197 },
  {
    option: 'ignoreUnknownIndexOptions',
    cmd: () => ix({ bogusOption: 1 }, { ignoreUnknownIndexOptions: true }),
    honoured: async (_r, h) => expect(await indexNamed(h, 'b_1')).not.toHaveProperty('bogusOption'),
  },
  { option: 'commitQuorum', cmd: () => ix({}, { commitQuorum: 'majority' }), refused: 2 },
  {
    option: 'comment',
    cmd: () => ix({}, { comment: 'why' }),
    honoured: async (_r, h) => expect(await indexNamed(h, 'b_1')).toBeDefined(),
  },
  {
    option: 'writeConcern',
    cmd: () => ix({}, { writeConcern: { w: 1 } }),
    honoured: async (_r, h) => expect(await indexNamed(h, 'b_1')).toBeDefined(),
  },
];

const created = async (h: DriverHarness): Promise<boolean> =>
  (await h.db.listCollections({ name: 'made' }).toArray()).length === 1;

const CREATE: Case[] = [
  { option: 'capped', cmd: () => ({ create: 'made', capped: true, size: 4096 }), refused: 2 },
  {
    option: 'validator',
    cmd: () => ({ create: 'made', validator: { a: { $type: 'int' } } }),
    refused: 2,
  },
  { option: 'collation', cmd: () => ({ create: 'made', collation: { locale: 'fr' } }), refused: 2 },
  {
    option: 'timeseries',
    cmd: () => ({ create: 'made', timeseries: { timeField: 't' } }),
    refused: 2,
  },
  {
    option: 'clusteredIndex',
    cmd: () => ({ create: 'made', clusteredIndex: { key: { _id: 1 }, unique: true } }),
    refused: 2,
  },
  { option: 'viewOn', cmd: () => ({ create: 'made', viewOn: 'c', pipeline: [] }), refused: 2 },
  {
    option: 'changeStreamPreAndPostImages',
    cmd: () => ({ create: 'made', changeStreamPreAndPostImages: { enabled: true } }),
    refused: 2,
  },
  {
    option: 'expireAfterSeconds',
    cmd: () => ({ create: 'made', expireAfterSeconds: 10 }),
    refused: 2,
  },
  {
    option: 'storageEngine',
    cmd: () => ({ create: 'made', storageEngine: { wiredTiger: {} } }),
    refused: 2,
  },
  {
    option: 'indexOptionDefaults',
    cmd: () => ({ create: 'made', indexOptionDefaults: { storageEngine: {} } }),
    refused: 2,
  },
  {
    option: 'encryptedFields',
    cmd: () => ({ create: 'made', encryptedFields: { fields: [] } }),
    refused: 2,
  },
  {
    option: 'idIndex',
    cmd: () => ({
      create: 'made',
      idIndex: { key: { _id: 1 }, name: '_id_', collation: { locale: 'fr' } },
    }),
    refused: 2,
  },
  {
    option: 'idIndex',
    cmd: () => ({ create: 'made', idIndex: { key: { _id: 1 }, name: '_id_' } }),
    honoured: async (_r, h) => expect(await created(h)).toBe(true),
  },
  { option: 'autoIndexId', cmd: () => ({ create: 'made', autoIndexId: false }), refused: 2 },
  {
    option: 'validationLevel',
    cmd: () => ({ create: 'made', validationLevel: 'strict' }),
    honoured: async (_r, h) => expect(await created(h)).toBe(true),
  },
  {
    option: 'validationAction',
    cmd: () => ({ create: 'made', validationAction: 'warn' }),
    honoured: async (_r, h) => expect(await created(h)).toBe(true),
  },
];

/** Any field a command does not know at all. */
const UNKNOWN: Case[] = [
  { option: 'noSuchOption', cmd: () => ({ find: 'c', noSuchOption: 1 }), refused: 40415 },
  {
    option: 'noSuchOption',
    cmd: () => ({ insert: 'c', documents: [{}], noSuchOption: 1 }),
    refused: 40415,
  },
  { option: 'noSuchOption', cmd: () => upd({ noSuchOption: 1 }), refused: 40415 },
  { option: 'noSuchOption', cmd: () => del({ noSuchOption: 1 }), refused: 40415 },
  { option: 'noSuchOption', cmd: () => fam({ noSuchOption: 1 }), refused: 40415 },
  { option: 'noSuchOption', cmd: () => agg({ noSuchOption: 1 }), refused: 40415 },
  { option: 'noSuchOption', cmd: () => ({ count: 'c', noSuchOption: 1 }), refused: 40415 },
  {
    option: 'noSuchOption',
    cmd: () => ({ distinct: 'c', key: 'a', noSuchOption: 1 }),
    refused: 40415,
  },
];

const TABLES: [string, Case[]][] = [
  ['find', FIND],
  ['insert', INSERT],
  ['update', UPDATE],
  ['delete', DELETE],
  ['findAndModify', FIND_AND_MODIFY],
  ['aggregate', AGGREGATE],
  ['count', COUNT],
  ['distinct', DISTINCT],
  ['createIndexes', CREATE_INDEXES],
  ['create', CREATE],
  ['any command', UNKNOWN],
];

async function send(h: DriverHarness, cmd: Document): Promise<Outcome> {
  const clean = Object.fromEntries(Object.entries(cmd).filter(([, v]) => v !== undefined));
  try {
    return { ok: true, reply: await h.db.command(clean) };
  } catch (err) {
    const e = err as {
      code?: number;
      message: string;
      errorResponse?: { writeErrors?: Document[] };
    };
    return { ok: false, code: e.code ?? -1, message: e.message };
  }
}

/** Write errors come back in an ok reply; they count as refusals of their statement. */
function asOutcome(o: Outcome): Outcome {
  if (!o.ok) return o;
  const we = o.reply['writeErrors'] as Document[] | undefined;
  if (we?.length)
    return { ok: false, code: we[0]?.['code'] as number, message: we[0]?.['errmsg'] as string };
  return o;
}

describe('options of MongoDB 8.0 commands: honoured or refused by name, never ignored', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
    const c = h.db.collection<Document>('c');
    await c.insertMany(
      [1, 2, 3, 4, 5].map((i): Document =>
        i === 5 ? { _id: i, a: i, arr: [1, 2, 3] } : { _id: i, a: i },
      ),
    );
    await c.createIndex({ a: 1 });
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  for (const [command, cases] of TABLES) {
    for (const tc of cases) {
      const what =
        tc.refused !== undefined ? `refused with code ${tc.refused} naming it` : 'honoured';
      const sent = tc.cmd();
      const field = tc.option.split('.').pop() as string;
      const statement = [sent['updates'], sent['deletes'], sent['indexes']].find(Array.isArray) as
        Document[] | undefined;
      const shown = tc.option.includes('.') ? statement?.[0]?.[field] : sent[field];
      it(`when ${command} is sent '${tc.option}' ${JSON.stringify(shown)}, then it is ${what}`, async () => {
        const outcome = await send(h, sent);
        if (tc.refused !== undefined) {
          // A statement's error comes back as a write error of an ok reply: a refusal all the same.
          const refusal = asOutcome(outcome);
          expect(refusal).toMatchObject({ ok: false, code: tc.refused });
          if (!refusal.ok) expect(refusal.message).toContain(tc.names ?? field);
        } else {
          if (!outcome.ok) throw new Error(`refused (${outcome.code}): ${outcome.message}`);
          await tc.honoured?.(outcome.reply, h);
        }
      });
    }
  }

  it('when getMore is sent batchSize and comment, then they are honoured; maxTimeMS on a non-awaitData cursor is refused by name', async () => {
    const r = await h.db.command({ find: 'c', batchSize: 1 });
    const id = cursorId(r);
    const more = await h.db.command({ getMore: id, collection: 'c', batchSize: 2, comment: 'why' });
    expect((more['cursor'] as Document)['nextBatch']).toHaveLength(2);
    const refused = asOutcome(await send(h, { getMore: id, collection: 'c', maxTimeMS: 10 }));
    expect(refused).toMatchObject({ ok: false, code: 2 });
    if (!refused.ok) expect(refused.message).toContain('maxTimeMS');
    expect(Long.isLong(id)).toBe(true);
  });
});
