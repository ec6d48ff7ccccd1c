// Unique indexes on every write path. Expected behaviour from the MongoDB manual:
// - "Unique Indexes": https://www.mongodb.com/docs/manual/core/index-unique/
//   ("If a document does not have a value for the indexed field in a unique index, the index will
//   store a null value for this document"; unique compound indexes enforce uniqueness on the combination)
// - "Sparse Indexes": https://www.mongodb.com/docs/manual/core/index-sparse/
// - "Partial Indexes": https://www.mongodb.com/docs/manual/core/index-partial/
// - "insert" command, ordered: https://www.mongodb.com/docs/manual/reference/command/insert/
// - "db.collection.bulkWrite()": https://www.mongodb.com/docs/manual/reference/method/db.collection.bulkWrite/
import { MongoBulkWriteError } from 'mongodb';
import { serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('unique indexes', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when a duplicate is inserted, then error 11000 carries the real message, keyPattern and keyValue', async () => {
    const users = h.db.collection('users');
    await users.createIndex({ email: 1 }, { unique: true });
    await users.insertOne({ email: 'a@example.org' });
    const err = await serverError(users.insertOne({ email: 'a@example.org' }));
    expect(err.code).toBe(11000);
    expect(err.message).toBe(
      'E11000 duplicate key error collection: test.users index: email_1 dup key: { email: "a@example.org" }',
    );
    expect(err['keyPattern']).toEqual({ email: 1 });
    expect(err['keyValue']).toEqual({ email: 'a@example.org' });
  });

  it('when _id is duplicated, then the _id_ index rejects it', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 7 as never });
    const err = await serverError(c.insertOne({ _id: 7 as never }));
    expect(err.code).toBe(11000);
    expect(err.message).toContain('index: _id_ dup key: { _id: 7 }');
  });

  it('when a unique field is missing in two documents, then the second counts as a duplicate null', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ code: 1 }, { unique: true });
    await c.insertOne({ other: 1 });
    const err = await serverError(c.insertOne({ other: 2 }));
    expect(err.code).toBe(11000);
    expect(err['keyValue']).toEqual({ code: null });
  });

  it('when a compound unique index exists, then only the same combination is a duplicate', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ a: 1, b: 1 }, { unique: true });
    await c.insertMany([
      { a: 1, b: 1 },
      { a: 1, b: 2 },
    ]);
    const err = await serverError(c.insertOne({ a: 1, b: 2 }));
    expect(err.message).toContain('index: a_1_b_1 dup key: { a: 1, b: 2 }');
    expect(err['keyPattern']).toEqual({ a: 1, b: 1 });
  });

  it('when a unique index is sparse, then documents without the field never conflict', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ nick: 1 }, { unique: true, sparse: true });
    await c.insertMany([{ x: 1 }, { x: 2 }, { nick: 'n' }]);
    expect((await serverError(c.insertOne({ nick: 'n' }))).code).toBe(11000);
  });

  it('when a unique index is partial, then only documents matching the filter are constrained', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ email: 1 }, { unique: true, partialFilterExpression: { active: true } });
    await c.insertMany([
      { email: 'x', active: false },
      { email: 'x', active: false },
      { email: 'x', active: true },
    ]);
    expect((await serverError(c.insertOne({ email: 'x', active: true }))).code).toBe(11000);
    // Moving a document into the filter by an update is a write path too.
    const err = await serverError(c.updateOne({ active: false }, { $set: { active: true } }));
    expect(err.code).toBe(11000);
  });

  it('when an unordered insertMany hits duplicates, then the others are inserted and writeErrors give their indexes', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertOne({ k: 'taken' });
    const err = await c
      .insertMany([{ k: 'a' }, { k: 'taken' }, { k: 'b' }, { k: 'a' }, { k: 'c' }], {
        ordered: false,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MongoBulkWriteError);
    const bulk = err as MongoBulkWriteError;
    expect(bulk.writeErrors).toHaveLength(2);
    expect(
      (Array.isArray(bulk.writeErrors) ? bulk.writeErrors : [bulk.writeErrors]).map((e) => e.index),
    ).toEqual([1, 3]);
    expect(bulk.result.insertedCount).toBe(3);
    expect(await c.countDocuments()).toBe(4);
  });

  it('when an ordered insertMany hits a duplicate, then it stops there', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ k: 1 }, { unique: true });
    const err = (await c
      .insertMany([{ k: 1 }, { k: 2 }, { k: 1 }, { k: 3 }])
      .catch((e: unknown) => e)) as MongoBulkWriteError;
    expect(err).toBeInstanceOf(MongoBulkWriteError);
    expect(err.result.insertedCount).toBe(2);
    expect(await c.countDocuments()).toBe(2);
  });

  it('when an update would create a duplicate, then it fails with 11000 and leaves the document unchanged', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertMany([
      { _id: 1, k: 'a' },
      { _id: 2, k: 'b' },
    ] as never[]);
    const err = await serverError(c.updateOne({ _id: 2 as never }, { $set: { k: 'a' } }));
    expect(err.code).toBe(11000);
    expect(err['keyValue']).toEqual({ k: 'a' });
    expect(await c.findOne({ _id: 2 as never })).toEqual({ _id: 2, k: 'b' });
  });

  it('when an upsert inserts a duplicate, then it fails with 11000', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertOne({ k: 'a', n: 1 });
    const err = await serverError(c.updateOne({ n: 2 }, { $set: { k: 'a' } }, { upsert: true }));
    expect(err.code).toBe(11000);
    expect(await c.countDocuments()).toBe(1);
  });

  it('when a replacement creates a duplicate, then it fails with 11000', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertMany([{ k: 'a' }, { k: 'b' }]);
    expect((await serverError(c.replaceOne({ k: 'b' }, { k: 'a' }))).code).toBe(11000);
  });

  it('when findOneAndUpdate would create a duplicate, then the command fails with 11000, keyPattern and keyValue', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertMany([{ k: 'a' }, { k: 'b' }]);
    const err = await serverError(c.findOneAndUpdate({ k: 'b' }, { $set: { k: 'a' } }));
    expect(err.code).toBe(11000);
    expect(err['keyPattern']).toEqual({ k: 1 });
    expect(err['keyValue']).toEqual({ k: 'a' });
    const upsertErr = await serverError(
      c.findOneAndUpdate({ k: 'zzz' }, { $set: { k: 'a' } }, { upsert: true }),
    );
    expect(upsertErr.code).toBe(11000);
  });

  it('when an unordered bulkWrite mixes operations with duplicates, then each failing operation is reported by index', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertOne({ k: 'a' });
    const err = (await c
      .bulkWrite(
        [
          { insertOne: { document: { k: 'b' } } },
          { insertOne: { document: { k: 'a' } } },
          { updateOne: { filter: { k: 'b' }, update: { $set: { k: 'a' } } } },
          { updateOne: { filter: { k: 'new' }, update: { $set: { n: 1 } }, upsert: true } },
          { deleteOne: { filter: { k: 'b' } } },
        ],
        { ordered: false },
      )
      .catch((e: unknown) => e)) as MongoBulkWriteError;
    expect(err).toBeInstanceOf(MongoBulkWriteError);
    const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    expect(errors.map((e) => [e.index, e.code])).toEqual([
      [1, 11000],
      [2, 11000],
    ]);
    expect(err.result.upsertedCount).toBe(1);
    expect(err.result.deletedCount).toBe(1);
  });

  it('when a unique index is created over existing duplicates, then createIndexes fails with 11000', async () => {
    const c = h.db.collection('c');
    await c.insertMany([{ k: 1 }, { k: 1 }]);
    const err = await serverError(c.createIndex({ k: 1 }, { unique: true }));
    expect(err.code).toBe(11000);
    expect((await c.indexes()).map((i) => i.name)).toEqual(['_id_']);
  });

  it('when array values are indexed, then each element is unique across documents', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ tags: 1 }, { unique: true });
    await c.insertOne({ tags: ['a', 'b'] });
    expect((await serverError(c.insertOne({ tags: ['c', 'b'] }))).code).toBe(11000);
  });
});
