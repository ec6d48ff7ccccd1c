// Reads send stored BSON bytes, and plain top-level projections are made on those bytes (src/raw.ts).
// Whatever the path, the documents a client reads must be exactly what it stored, every BSON type
// included, and a projection must return exactly MongoDB's fields in stored order.
// - "Project Fields to Return from Query": https://www.mongodb.com/docs/manual/tutorial/project-fields-from-query-results/
// - BSON types: https://www.mongodb.com/docs/manual/reference/bson-types/
import {
  Binary,
  BSONRegExp,
  Code,
  DBRef,
  Decimal128,
  Double,
  Int32,
  Long,
  MaxKey,
  MinKey,
  ObjectId,
  Timestamp,
  UUID,
  type Document,
} from 'mongodb';
import { startWithDriver, stopHarness, type DriverHarness } from './helpers';

/** Test documents with any `_id` type. */
type AnyIdDoc = Document & { _id: number | string };

const RAW = {
  promoteValues: false,
  promoteLongs: false,
  promoteBuffers: false,
  bsonRegExp: true,
} as const;

function everyType(id: number): AnyIdDoc {
  return {
    _id: id,
    double: new Double(1.5),
    string: 'ünïcode ✓',
    object: { nested: new Int32(1), deeper: { arr: [new Int32(1), 'two', null] } },
    array: [new Int32(1), [new Long(2)], { x: new Int32(3) }],
    binary: new Binary(Buffer.from([1, 2, 3]), 0),
    uuid: new UUID('0f8fad5b-d9cb-469f-a165-70867728950e'),
    objectId: new ObjectId('64b7f0000000000000000001'),
    bool: true,
    date: new Date(1_700_000_000_000),
    null: null,
    regex: new BSONRegExp('^a.b$', 'i'),
    dbref: new DBRef('other', new Int32(5) as unknown as ObjectId),
    code: new Code('function () { return 1; }'),
    int32: new Int32(-7),
    timestamp: new Timestamp({ t: 100, i: 2 }),
    int64: Long.fromString('9007199254740993'),
    decimal: Decimal128.fromString('1.10'),
    minKey: new MinKey(),
    maxKey: new MaxKey(),
    last: 'end',
  };
}

describe('reads from stored bytes', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when documents of every BSON type are stored, then find returns each value with its exact type', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await c.insertMany([everyType(1), everyType(2)]);
    const docs = await c.find({}, RAW).sort({ _id: 1 }).toArray();
    const expected = [everyType(1), everyType(2)].map((d) => ({
      ...d,
      _id: new Int32(d['_id'] as number),
    }));
    expect(docs).toEqual(expected);
  });

  it('when a plain inclusion projection names fields of every type, then exactly those come back in stored order, _id first', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await c.insertOne(everyType(1));
    const [doc] = await c
      .find(
        {},
        {
          ...RAW,
          projection: { maxKey: 1, regex: 1, timestamp: 1, decimal: 1, array: 1, code: 1 },
        },
      )
      .toArray();
    expect(Object.keys(doc as Document)).toEqual([
      '_id',
      'array',
      'regex',
      'code',
      'timestamp',
      'decimal',
      'maxKey',
    ]);
    const all = everyType(1);
    expect(doc).toEqual({
      _id: new Int32(1),
      array: all['array'],
      regex: all['regex'],
      code: all['code'],
      timestamp: all['timestamp'],
      decimal: all['decimal'],
      maxKey: all['maxKey'],
    });
  });

  it('when a plain exclusion projection drops fields and _id, then every other field comes back unchanged', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await c.insertOne(everyType(1));
    const [doc] = await c
      .find({}, { ...RAW, projection: { _id: 0, binary: 0, minKey: 0, dbref: 0 } })
      .toArray();
    const { _id: _a, binary: _b, minKey: _c, dbref: _d, ...rest } = everyType(1);
    expect(Object.keys(doc as Document)).toEqual(Object.keys(rest));
    expect(doc).toEqual(rest);
  });

  it('when projected field names are not ASCII, then they are matched by their exact name', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await c.insertOne({ _id: 1, ünï: 1, unï: 2, 名前: 3, ü: 4 });
    expect(await c.find({}, { projection: { ünï: 1, 名前: 1 } }).toArray()).toEqual([
      { _id: 1, ünï: 1, 名前: 3 },
    ]);
    expect(await c.find({}, { projection: { ünï: 0, _id: 0 } }).toArray()).toEqual([
      { unï: 2, 名前: 3, ü: 4 },
    ]);
  });

  it('when a projection is only {_id: 1} or only {_id: 0}, then only _id, or everything but _id, comes back', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await c.insertOne({ _id: 1, a: 1, b: 2 });
    expect(await c.find({}, { projection: { _id: 1 } }).toArray()).toEqual([{ _id: 1 }]);
    expect(await c.find({}, { projection: { _id: 0 } }).toArray()).toEqual([{ a: 1, b: 2 }]);
  });

  it('when a document is inserted without _id or with _id last, then it is read back with _id first', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await h.db.command({ insert: 't', documents: [{ a: 1, _id: 'last' }, { b: 2 }] });
    const docs = await c.find({}).toArray();
    expect(docs.map((d) => Object.keys(d)[0])).toEqual(['_id', '_id']);
    expect(docs[0]).toEqual({ _id: 'last', a: 1 });
  });

  it('when a document is updated or replaced, then reads return the new document, also through a projection', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await c.insertMany([
      { _id: 1, a: 1, keep: 'x' },
      { _id: 2, a: 2 },
    ]);
    await c.updateOne({ _id: 1 }, { $set: { a: 10 } });
    await c.replaceOne({ _id: 2 }, { z: 'new' });
    expect(await c.find({}).sort({ _id: 1 }).toArray()).toEqual([
      { _id: 1, a: 10, keep: 'x' },
      { _id: 2, z: 'new' },
    ]);
    expect(
      await c
        .find({}, { projection: { a: 1 } })
        .sort({ _id: 1 })
        .toArray(),
    ).toEqual([{ _id: 1, a: 10 }, { _id: 2 }]);
  });

  it('when many documents are read in several batches, then each comes exactly once in order', async () => {
    const c = h.db.collection<AnyIdDoc>('t');
    await c.insertMany(
      Array.from({ length: 1500 }, (_, i) => ({ _id: i, pad: 'p'.repeat(i % 50) })),
    );
    const ids = (await c.find({}, { batchSize: 700, projection: { pad: 0 } }).toArray()).map(
      (d) => d['_id'],
    );
    expect(ids).toEqual(Array.from({ length: 1500 }, (_, i) => i));
  });
});
