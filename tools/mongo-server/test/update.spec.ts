// Updates through the official driver. Expected behaviour from the MongoDB manual:
// - "update" command (n, nModified, upserted): https://www.mongodb.com/docs/manual/reference/command/update/
// - "$ (update)": https://www.mongodb.com/docs/manual/reference/operator/update/positional/
// - "$[]": https://www.mongodb.com/docs/manual/reference/operator/update/positional-all/
// - "$[<identifier>]" and arrayFilters: https://www.mongodb.com/docs/manual/reference/operator/update/positional-filtered/
// - "$setOnInsert": https://www.mongodb.com/docs/manual/reference/operator/update/setOnInsert/
// - "$inc" ("Use of the $inc operator on a field with a null value will generate an error" / non-numeric):
//   https://www.mongodb.com/docs/manual/reference/operator/update/inc/
// - "findAndModify" (lastErrorObject.upserted, new, fields, remove, sort):
//   https://www.mongodb.com/docs/manual/reference/command/findAndModify/
// - "Upsert with Replacement Document" in db.collection.replaceOne():
//   https://www.mongodb.com/docs/manual/reference/method/db.collection.replaceOne/
import { Int32, Long, ObjectId, Timestamp } from 'mongodb';
import { serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('updates', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when a multi update changes some documents, then matched and modified counts differ accordingly', async () => {
    const c = h.db.collection('c');
    await c.insertMany([
      { s: 'x', v: 1 },
      { s: 'x', v: 2 },
      { s: 'y', v: 2 },
    ]);
    const res = await c.updateMany({ v: { $gte: 1 } }, { $set: { v: 2 } });
    expect(res.matchedCount).toBe(3);
    expect(res.modifiedCount).toBe(1);
    expect(res.upsertedCount).toBe(0);
  });

  it('when an update matches nothing with upsert, then the query equality fields, $set and $setOnInsert form the new document', async () => {
    const c = h.db.collection('c');
    const res = await c.updateOne(
      { tenant: 't1', key: 'k', n: { $gt: 5 } },
      { $set: { v: 1 }, $setOnInsert: { createdBy: 'test' } },
      { upsert: true },
    );
    expect(res.upsertedCount).toBe(1);
    expect(res.upsertedId).toBeInstanceOf(ObjectId);
    const doc = await c.findOne({ _id: res.upsertedId as ObjectId });
    expect(doc).toEqual({ _id: res.upsertedId, tenant: 't1', key: 'k', v: 1, createdBy: 'test' });
  });

  it('when an upsert matches an existing document, then $setOnInsert is not applied', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ key: 'k', v: 0 });
    const res = await c.updateOne(
      { key: 'k' },
      { $set: { v: 1 }, $setOnInsert: { createdBy: 'x' } },
      { upsert: true },
    );
    expect(res.matchedCount).toBe(1);
    expect(res.modifiedCount).toBe(1);
    expect(res.upsertedId).toBeNull();
    const doc = await c.findOne({ key: 'k' }, { projection: { _id: 0 } });
    expect(doc).toEqual({ key: 'k', v: 1 });
  });

  it('when the upsert query pins _id, then the inserted document uses it', async () => {
    const c = h.db.collection<{ _id: string; v?: number }>('c');
    const res = await c.updateOne({ _id: 'fixed' }, { $inc: { v: 2 } }, { upsert: true });
    expect(res.upsertedId).toBe('fixed');
    expect(await c.findOne({ _id: 'fixed' })).toEqual({ _id: 'fixed', v: 2 });
  });

  it('when a replacement document is used, then all other fields are replaced and _id is kept', async () => {
    const c = h.db.collection('c');
    const { insertedId } = await c.insertOne({ a: 1, b: 2 });
    const res = await c.replaceOne({ _id: insertedId }, { c: 3 });
    expect(res.modifiedCount).toBe(1);
    expect(await c.findOne({ _id: insertedId })).toEqual({ _id: insertedId, c: 3 });
    const up = await c.replaceOne({ name: 'new' }, { name: 'new', d: 4 }, { upsert: true });
    expect(up.upsertedCount).toBe(1);
    expect(await c.findOne({ _id: up.upsertedId as ObjectId }, { projection: { _id: 0 } })).toEqual(
      { name: 'new', d: 4 },
    );
  });

  it('when a replacement changes _id, then the update fails with ImmutableField (66)', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, a: 1 });
    const err = await serverError(c.replaceOne({ _id: 1 as never }, { _id: 2, a: 1 } as never));
    expect(err.code).toBe(66);
  });

  it('when the positional $ operator is used, then only the first matched array element changes', async () => {
    const c = h.db.collection('c');
    await c.insertOne({
      _id: 1 as never,
      grades: [80, 85, 85, 90],
      items: [
        { sku: 'a', q: 1 },
        { sku: 'b', q: 1 },
      ],
    });
    await c.updateOne({ _id: 1 as never, grades: 85 }, { $set: { 'grades.$': 100 } });
    await c.updateOne({ _id: 1 as never, 'items.sku': 'b' }, { $inc: { 'items.$.q': 5 } });
    expect(await c.findOne({ _id: 1 as never })).toEqual({
      _id: 1,
      grades: [80, 100, 85, 90],
      items: [
        { sku: 'a', q: 1 },
        { sku: 'b', q: 6 },
      ],
    });
  });

  it('when the positional $ operator has no matching array in the query, then the update fails', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, grades: [1] });
    const err = await serverError(c.updateOne({ _id: 1 as never }, { $set: { 'grades.$': 2 } }));
    expect(err.code).toBe(2);
  });

  it('when $[] and $[<identifier>] with arrayFilters are used, then all or only the filtered elements change', async () => {
    const c = h.db.collection('c');
    await c.insertOne({
      _id: 1 as never,
      grades: [95, 92, 90],
      items: [{ q: 1 }, { q: 5 }, { q: 10 }],
    });
    await c.updateOne({ _id: 1 as never }, { $inc: { 'grades.$[]': 1 } });
    await c.updateOne(
      { _id: 1 as never },
      { $set: { 'items.$[big].flag': true } },
      { arrayFilters: [{ 'big.q': { $gte: 5 } }] },
    );
    expect(await c.findOne({ _id: 1 as never })).toEqual({
      _id: 1,
      grades: [96, 93, 91],
      items: [{ q: 1 }, { q: 5, flag: true }, { q: 10, flag: true }],
    });
  });

  it('when $inc targets a non-numeric field, then the update fails with TypeMismatch (14)', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, name: 'x', nothing: null });
    const err = await serverError(c.updateOne({ _id: 1 as never }, { $inc: { name: 1 } }));
    expect(err.code).toBe(14);
    expect(err.message).toContain('Cannot apply $inc to a value of non-numeric type');
    expect(
      (await serverError(c.updateOne({ _id: 1 as never }, { $inc: { nothing: 1 } }))).code,
    ).toBe(14);
    expect(
      (await serverError(c.updateOne({ _id: 1 as never }, { $inc: { n: 'one' } as never }))).code,
    ).toBe(14);
  });

  it('when $push targets a non-array, then the update fails', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, name: 'x' });
    expect(
      (await serverError(c.updateOne({ _id: 1 as never }, { $push: { name: 'y' } as never }))).code,
    ).toBe(2);
  });

  it('when an unknown update operator is used, then the update fails with FailedToParse (9)', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never });
    const err = await serverError(
      c.updateOne({ _id: 1 as never }, { $frobnicate: { a: 1 } } as never),
    );
    expect(err.code).toBe(9);
    expect(err.message).toContain('Unknown modifier: $frobnicate');
  });

  it('when $inc runs on int64 and int32 values, then their BSON types are kept', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, big: Long.fromNumber(10), small: new Int32(1) });
    await c.updateOne({ _id: 1 as never }, { $inc: { big: 5, small: 1 } });
    const raw = await c.findOne({ _id: 1 as never }, { promoteValues: false });
    expect(raw?.['big']).toBeInstanceOf(Long);
    expect((raw?.['big'] as Long).toNumber()).toBe(15);
    expect(raw?.['small']).toBeInstanceOf(Int32);
  });

  it('when $currentDate asks for a timestamp, then a BSON timestamp is stored', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never });
    await c.updateOne({ _id: 1 as never }, {
      $currentDate: { at: true, ts: { $type: 'timestamp' } },
    } as never);
    const doc = await c.findOne({ _id: 1 as never });
    expect(doc?.['at']).toBeInstanceOf(Date);
    expect(doc?.['ts']).toBeInstanceOf(Timestamp);
  });

  it('when a pipeline update is used, then aggregation expressions compute the new fields', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, a: 2, b: 3 });
    await c.updateOne({ _id: 1 as never }, [
      { $set: { sum: { $add: ['$a', '$b'] } } },
      { $unset: 'b' },
    ]);
    expect(await c.findOne({ _id: 1 as never })).toEqual({ _id: 1, a: 2, sum: 5 });
  });

  it('when findOneAndUpdate upserts, then lastErrorObject reports upserted and the new document is returned', async () => {
    const c = h.db.collection('c');
    const res = await c.findOneAndUpdate(
      { key: 'k' },
      { $set: { v: 1 } },
      { upsert: true, returnDocument: 'after', includeResultMetadata: true },
    );
    expect(res.lastErrorObject?.['updatedExisting']).toBe(false);
    expect(res.lastErrorObject?.['n']).toBe(1);
    expect(res.lastErrorObject?.['upserted']).toBeInstanceOf(ObjectId);
    expect(res.value).toMatchObject({ key: 'k', v: 1 });
    const again = await c.findOneAndUpdate(
      { key: 'k' },
      { $inc: { v: 1 } },
      { includeResultMetadata: true },
    );
    expect(again.lastErrorObject).toEqual({ n: 1, updatedExisting: true });
    expect(again.value).toMatchObject({ v: 1 }); // the document before the update
  });

  it('when findOneAndUpdate sorts and projects, then it modifies the first in sort order and returns only the fields asked for', async () => {
    const c = h.db.collection('c');
    await c.insertMany([
      { q: 'a', p: 1, x: 1 },
      { q: 'a', p: 3, x: 1 },
      { q: 'a', p: 2, x: 1 },
    ]);
    const doc = await c.findOneAndUpdate(
      { q: 'a' },
      { $set: { taken: true } },
      { sort: { p: -1 }, projection: { p: 1, taken: 1, _id: 0 }, returnDocument: 'after' },
    );
    expect(doc).toEqual({ p: 3, taken: true });
  });

  it('when findOneAndDelete runs, then it returns the removed document', async () => {
    const c = h.db.collection('c');
    await c.insertMany([{ q: 1 }, { q: 2 }]);
    const doc = await c.findOneAndDelete({ q: 2 });
    expect(doc).toMatchObject({ q: 2 });
    expect(await c.countDocuments()).toBe(1);
  });

  it('when $set writes the same _id, then it is allowed; a different _id is ImmutableField (66)', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 5 as never, a: 1 });
    const same = await c.updateOne({ _id: 5 as never }, { $set: { _id: 5, a: 2 } as never });
    expect(same.modifiedCount).toBe(1);
    expect(
      (await serverError(c.updateOne({ _id: 5 as never }, { $set: { _id: 6 } as never }))).code,
    ).toBe(66);
  });

  it('when a path goes through a scalar, then the update fails with PathNotViable (28)', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, a: 'text' });
    expect((await serverError(c.updateOne({ _id: 1 as never }, { $set: { 'a.b': 1 } }))).code).toBe(
      28,
    );
  });

  it('when an update would grow a document beyond 16 MiB, then it fails and the document is unchanged', async () => {
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, parts: [] });
    const chunk = 'x'.repeat(6 * 1024 * 1024);
    await c.updateOne({ _id: 1 as never }, { $push: { parts: chunk } as never });
    await c.updateOne({ _id: 1 as never }, { $push: { parts: chunk } as never });
    const err = await serverError(
      c.updateOne({ _id: 1 as never }, { $push: { parts: chunk } as never }),
    );
    expect(err.code).toBe(17419);
    const doc = await c.findOne({ _id: 1 as never });
    expect((doc?.['parts'] as string[]).length).toBe(2);
  });

  it('when $push uses $each with $position, $slice and $sort, then the array is built as MongoDB does', async () => {
    // "$push" modifiers: https://www.mongodb.com/docs/manual/reference/operator/update/push/
    const c = h.db.collection('c');
    await c.insertOne({ _id: 1 as never, a: [1, 2], s: [{ v: 3 }, { v: 1 }] });
    await c.updateOne({ _id: 1 as never }, {
      $push: { a: { $each: [8, 9], $position: 0, $slice: 3 } },
    } as never);
    await c.updateOne({ _id: 1 as never }, {
      $push: { s: { $each: [{ v: 2 }], $sort: { v: 1 } } },
    } as never);
    await c.updateOne({ _id: 1 as never }, { $addToSet: { a: { $each: [8, 10] } } } as never);
    expect(await c.findOne({ _id: 1 as never })).toEqual({
      _id: 1,
      a: [8, 9, 1, 10],
      s: [{ v: 1 }, { v: 2 }, { v: 3 }],
    });
  });
});
