// CRUD through the official driver. Expected behaviour from the MongoDB manual:
// - "insert" command: https://www.mongodb.com/docs/manual/reference/command/insert/
// - "find" command: https://www.mongodb.com/docs/manual/reference/command/find/
// - "delete" command: https://www.mongodb.com/docs/manual/reference/command/delete/
// - "count", "distinct": https://www.mongodb.com/docs/manual/reference/command/count/ , .../distinct/
// - "Query and Projection Operators": https://www.mongodb.com/docs/manual/reference/operator/query/
import { Decimal128, Double, Int32, Long, ObjectId } from 'mongodb';
import { startWithDriver, stopHarness, type DriverHarness } from './helpers';

type NumberIdDoc = { _id: number } & Record<string, unknown>;

describe('CRUD through the official driver', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when a document without _id is inserted, then the server generates an ObjectId first in the document', async () => {
    // insert command: "If the document does not specify an _id field, then mongod adds the _id field".
    const coll = h.db.collection('people');
    await coll.insertOne({ name: 'Ada' }, { forceServerObjectId: true });
    const stored = await coll.findOne({ name: 'Ada' });
    expect(stored?._id).toBeInstanceOf(ObjectId);
    expect(Object.keys(stored ?? {})[0]).toBe('_id');
  });

  it('when documents are filtered, sorted, projected, skipped and limited, then find returns exactly that', async () => {
    const coll = h.db.collection<NumberIdDoc>('people');
    await coll.insertMany([
      { _id: 1, name: 'a', age: 30, city: 'Oslo' },
      { _id: 2, name: 'b', age: 25, city: 'Bergen' },
      { _id: 3, name: 'c', age: 35, city: 'Oslo' },
      { _id: 4, name: 'd', age: 40, city: 'Oslo' },
    ]);
    const docs = await coll
      .find({ city: 'Oslo', age: { $gte: 30 } }, { projection: { name: 1, _id: 0 } })
      .sort({ age: -1 })
      .skip(1)
      .limit(2)
      .toArray();
    expect(docs).toEqual([{ name: 'c' }, { name: 'a' }]);
  });

  it('when a projection excludes fields, then the other fields come back in stored order', async () => {
    const coll = h.db.collection<NumberIdDoc>('people');
    await coll.insertOne({ _id: 1, a: 1, b: 2, c: 3 });
    const doc = await coll.findOne({ _id: 1 }, { projection: { b: 0 } });
    expect(Object.keys(doc ?? {})).toEqual(['_id', 'a', 'c']);
  });

  it('when deleteOne and deleteMany run, then limit 1 removes one match and limit 0 removes all', async () => {
    const coll = h.db.collection('things');
    await coll.insertMany([{ k: 1 }, { k: 1 }, { k: 1 }, { k: 2 }]);
    expect((await coll.deleteOne({ k: 1 })).deletedCount).toBe(1);
    expect((await coll.deleteMany({ k: 1 })).deletedCount).toBe(2);
    expect(await coll.countDocuments()).toBe(1);
  });

  it('when count, countDocuments, estimatedDocumentCount and distinct run, then they agree with the data', async () => {
    const coll = h.db.collection('things');
    await coll.insertMany([
      { t: ['x', 'y'], n: 1 },
      { t: ['y', 'z'], n: 2 },
      { t: 'x', n: 3 },
    ]);
    expect(await coll.countDocuments({ n: { $gt: 1 } })).toBe(2);
    expect(await coll.estimatedDocumentCount()).toBe(3);
    // distinct: "If the value of the specified field is an array, distinct considers each element".
    expect((await coll.distinct('t')).sort()).toEqual(['x', 'y', 'z']);
    expect(await coll.distinct('n', { t: 'x' })).toEqual([1, 3]);
  });

  it('when query operators are combined, then matching follows MongoDB semantics', async () => {
    const coll = h.db.collection<NumberIdDoc>('q');
    await coll.insertMany([
      { _id: 1, tags: ['a', 'b'], items: [{ sku: 'x', qty: 1 }], name: 'Alpha' },
      { _id: 2, tags: ['c'], items: [{ sku: 'y', qty: 5 }], name: 'beta' },
      { _id: 3, name: null },
      { _id: 4 },
    ]);
    const ids = async (filter: object): Promise<unknown[]> =>
      (await coll.find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ tags: 'a' })).toEqual([1]);
    expect(await ids({ tags: { $in: ['c', 'z'] } })).toEqual([2]);
    expect(await ids({ items: { $elemMatch: { sku: 'y', qty: { $gt: 2 } } } })).toEqual([2]);
    expect(await ids({ name: { $regex: '^al', $options: 'i' } })).toEqual([1]);
    // Equality to null matches null and missing fields ("Query for Null or Missing Fields").
    expect(await ids({ name: null })).toEqual([3, 4]);
    expect(await ids({ name: { $exists: false } })).toEqual([4]);
    expect(await ids({ $or: [{ _id: 1 }, { 'items.sku': 'y' }] })).toEqual([1, 2]);
    expect(await ids({ $expr: { $gt: [{ $size: { $ifNull: ['$tags', []] } }, 1] } })).toEqual([1]);
  });

  it('when numbers of different BSON types are compared, then they are equal by value', async () => {
    // "Comparison/Sort Order": numeric types are compared by value across int, long, double, decimal.
    const coll = h.db.collection<NumberIdDoc>('nums');
    await coll.insertMany([
      { _id: 1, v: new Int32(5) },
      { _id: 2, v: Long.fromNumber(5) },
      { _id: 3, v: new Double(5) },
      { _id: 4, v: Decimal128.fromString('5') },
      { _id: 5, v: 6 },
    ]);
    expect((await coll.find({ v: 5 }).toArray()).map((d) => d._id).sort()).toEqual([1, 2, 3, 4]);
    expect(
      (await coll.find({ v: { $gt: Long.fromNumber(5) } }).toArray()).map((d) => d._id),
    ).toEqual([5]);
  });

  it('when ObjectIds and dates are queried, then equality and ranges work on their values', async () => {
    const coll = h.db.collection('refs');
    const a = new ObjectId();
    await coll.insertMany([
      { ref: a, at: new Date('2024-01-01T00:00:00Z') },
      { ref: new ObjectId(), at: new Date('2024-06-01T00:00:00Z') },
    ]);
    expect(await coll.countDocuments({ ref: new ObjectId(a.toHexString()) })).toBe(1);
    expect(await coll.countDocuments({ at: { $gte: new Date('2024-03-01T00:00:00Z') } })).toBe(1);
    expect(await coll.countDocuments({ at: new Date('2024-01-01T00:00:00Z') })).toBe(1);
  });

  it('when indexed fields are queried by equality or $in, then the results equal those of a full scan', async () => {
    // Indexes change speed, never results ("Indexes": https://www.mongodb.com/docs/manual/indexes/).
    // A filter wrapped in $or is answered by scanning, so it is the reference here.
    const coll = h.db.collection<NumberIdDoc>('idx');
    await coll.createIndex({ k: 1 });
    await coll.createIndex({ 'sub.x': 1 }, { sparse: true });
    await coll.createIndex({ a: 1, b: 1 });
    const values = [
      1,
      new Int32(1),
      Long.fromNumber(1),
      new Double(1),
      2,
      'a',
      'b',
      null,
      true,
      new Date(0),
      ['a', 1],
      [],
      { y: 1 },
    ];
    const docs: NumberIdDoc[] = [];
    for (let i = 0; i < 60; i++) {
      const doc: NumberIdDoc = { _id: i };
      if (i % 5 !== 0) doc['k'] = values[i % values.length];
      if (i % 3 === 0)
        doc['sub'] = i % 2 ? { x: values[(i + 1) % values.length] } : [{ x: 'a' }, { x: 2 }];
      doc['a'] = i % 4;
      doc['b'] = i % 7 === 0 ? ['x', 'y'] : 'x';
      docs.push(doc);
    }
    await coll.insertMany(docs);
    const filters: Array<Record<string, unknown>> = [
      { k: 1 },
      { k: 'a' },
      { k: true },
      { k: new Date(0) },
      { k: { $in: [2, 'b'] } },
      { k: { $eq: 1 }, a: { $gt: 1 } },
      { 'sub.x': 'a' },
      { 'sub.x': 2 },
      { a: 1, b: 'x' },
      { a: 0, b: 'y' },
      { $and: [{ a: 2 }, { b: 'x' }] },
      { _id: { $in: [1, 2, 99] } },
      { _id: 7 },
    ];
    for (const filter of filters) {
      const viaIndex = (await coll.find(filter).toArray()).map((d) => d._id).sort((x, y) => x - y);
      const viaScan = (await coll.find({ $or: [filter] }).toArray())
        .map((d) => d._id)
        .sort((x, y) => x - y);
      expect({ filter, ids: viaIndex }).toEqual({ filter, ids: viaScan });
      expect(viaIndex.length).toBeGreaterThan(0);
    }
  });
});
