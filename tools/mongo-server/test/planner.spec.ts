// Query paths that exist only for speed must give exactly what the general path gives: index prefix
// and range scans (compared with the same queries on an unindexed copy of the data), the fast
// projection (compared with expected documents through the driver, and with mingo's projection on the
// same stored documents), lazy cursors (a snapshot, as before) and the equality matcher.
// - "Comparison Query Operators" and type bracketing:
//   https://www.mongodb.com/docs/manual/reference/operator/query-comparison/
// - "Multikey Index Bounds": https://www.mongodb.com/docs/manual/core/multikey-index-bounds/
// - "Project Fields to Return from Query":
//   https://www.mongodb.com/docs/manual/tutorial/project-fields-from-query-results/
import {
  Binary,
  BSONRegExp,
  Code,
  Decimal128,
  Double,
  Int32,
  Long,
  MaxKey,
  MinKey,
  ObjectId,
  serialize,
  Timestamp,
  UUID,
} from 'bson';
import type { Document, Filter } from 'mongodb';

/** Test documents with any `_id` type. */
type AnyIdDoc = Document & { _id: number | string };
import { Query } from 'mingo';
import { compileScalarFilter, project } from '../src/engine';
import { compileFastProjection, FALLBACK } from '../src/projection';
import { ARRAY, keyAtPath, OTHER, TopElements, topKey, topValue } from '../src/raw';
import {
  followKeyOrder,
  keyOf,
  retype,
  toView,
  toViewDoc,
  valuesAtPath,
  type Doc,
} from '../src/values';
import { cursorId, startWithDriver, stopHarness, type DriverHarness } from './helpers';

const byId = (a: Document, b: Document): number => String(a['_id']).localeCompare(String(b['_id']));

describe('query planner and fast paths', () => {
  let h: DriverHarness;
  beforeAll(async () => {
    h = await startWithDriver();
  });
  afterAll(async () => {
    await stopHarness(h);
  });

  const rangeDocs = (): AnyIdDoc[] => [
    { _id: 'a1', ds: 'a', v: 1 },
    { _id: 'a2', ds: 'a', v: new Long(2) },
    { _id: 'a3', ds: 'a', v: new Double(3.5) },
    { _id: 'a4', ds: 'a', v: Decimal128.fromString('4') },
    { _id: 'a5', ds: 'a', v: new Int32(5) },
    { _id: 'a6', ds: 'a', v: '6' },
    { _id: 'a7', ds: 'a', v: null },
    { _id: 'a8', ds: 'a' },
    { _id: 'a9', ds: 'a', v: [1, 9] },
    { _id: 'a10', ds: 'a', v: new Date(7) },
    { _id: 'a11', ds: 'a', v: Number.NaN },
    { _id: 'a12', ds: 'a', v: { n: 5 } },
    { _id: 'a13', ds: 'a', v: -Infinity },
    { _id: 'a14', ds: 'a', v: [[6]] },
    { _id: 'a15', ds: ['a', 'b'], v: 4 },
    { _id: 'b1', ds: 'b', v: 3 },
    { _id: 'b2', ds: 'b', v: 8, prev: null },
    { _id: 'b3', ds: 'b', v: 9, prev: { v: 1 } },
    { _id: 'c1', ds: 1, v: 3 },
    { _id: 'c2', ds: new Long(1), v: 4 },
    { _id: 'c3', v: 2 },
  ];

  it('when ranges follow an equality prefix of a compound index, then results equal an unindexed scan', async () => {
    const indexed = h.db.collection<AnyIdDoc>('ranged');
    const plain = h.db.collection<AnyIdDoc>('ranged_plain');
    await indexed.createIndex({ ds: 1, v: 1 });
    await indexed.createIndex({ v: 1 });
    await indexed.insertMany(rangeDocs());
    await plain.insertMany(rangeDocs());
    const filters: Filter<AnyIdDoc>[] = [
      { ds: 'a' },
      { ds: 'b' },
      { ds: 1 },
      { ds: { $in: ['a', 'b'] } },
      { ds: 'a', v: { $gt: 2 } },
      { ds: 'a', v: { $gte: 2 } },
      { ds: 'a', v: { $lt: 4 } },
      { ds: 'a', v: { $lte: 4 } },
      { ds: 'a', v: { $gt: 1, $lt: 5 } },
      { ds: 'a', v: { $gte: 1, $lte: 5, $ne: 3.5 } },
      { ds: 'a', v: { $gt: 8, $lt: 2 } }, // a multikey [1, 9] satisfies both bounds
      { ds: 'a', $and: [{ v: { $gt: 2 } }, { v: { $lt: 5 } }] },
      { ds: 'a', v: { $gt: -Infinity } },
      { ds: 'a', v: { $lt: Infinity } },
      { ds: 'a', v: { $gt: new Long(3) } },
      { ds: 'a', v: { $gt: Decimal128.fromString('3.25') } },
      { ds: 'a', v: { $gt: '5' } },
      { ds: 'a', v: { $gt: new Date(0) } },
      { ds: 'a', v: { $gt: null } },
      { ds: 'b', v: { $gt: 5 }, prev: null },
      { ds: 'b', v: { $gt: 5 }, prev: { $ne: null } },
      { v: { $gt: 3 } },
      { v: { $lte: 3 } },
      { ds: { $in: [1, 'b'] }, v: { $gte: 3, $lt: 9 } },
      // $or: each branch with the rest of the filter may use its own index (refsync's full list).
      {
        ds: 'b',
        $or: [
          { ds: 'b', v: { $lte: 8 } },
          { ds: 'b', v: { $gt: 8 }, prev: { $ne: null } },
        ],
      },
      { $or: [{ ds: 'a', v: { $gt: 3 } }, { v: { $lte: 2 } }] },
      { $or: [{ ds: 'a', v: { $gt: 3 } }, { ds: 'b' }, { ds: 1 }] },
      { $or: [{ ds: 'a' }, { prev: null }] }, // a branch without an index: a scan
      { ds: 'a', $or: [{ ds: 'b' }, { v: 1 }] }, // a branch contradicting the rest
      { $or: [{ v: { $gt: 8, $lt: 2 } }, { ds: 'c' }] },
      {
        $or: [
          { ds: 'a', v: 5 },
          { ds: 'a', v: 5 },
        ],
      }, // overlapping branches: each document once
    ];
    for (const filter of filters) {
      const expected = (await plain.find(filter).toArray()).sort(byId);
      const actual = await indexed.find(filter).toArray();
      expect({ filter, docs: [...actual].sort(byId) }).toEqual({ filter, docs: expected });
      // Results from an index scan come in natural (insertion) order, as a collection scan gives.
      expect({ filter, ids: actual.map((d) => d['_id']) }).toEqual({
        filter,
        ids: (await plain.find(filter).toArray()).map((d) => d['_id']),
      });
      expect(await indexed.countDocuments(filter)).toBe(expected.length);
    }
  });

  it('when deleteMany and updateMany use an equality prefix and a range, then exactly the matches change', async () => {
    const items = h.db.collection<AnyIdDoc>('recover');
    await items.createIndex({ ds: 1, v: 1 });
    await items.insertMany(rangeDocs());
    const deleted = await items.deleteMany({ ds: 'b', v: { $gt: 5 }, prev: null });
    expect(deleted.deletedCount).toBe(1);
    const updated = await items.updateMany({ ds: 'b', v: { $gt: 5 }, prev: { $ne: null } }, [
      { $set: { v: '$prev.v', prev: { $literal: null } } },
    ]);
    expect(updated.modifiedCount).toBe(1);
    expect(await items.find({ ds: 'b' }).sort({ _id: 1 }).toArray()).toEqual([
      { _id: 'a15', ds: ['a', 'b'], v: 4 },
      { _id: 'b1', ds: 'b', v: 3 },
      { _id: 'b3', ds: 'b', v: 1, prev: null },
    ]);
    // The index follows the update: the moved document is found at its new key only.
    expect((await items.find({ ds: 'b', v: { $gt: 5 } }).toArray()).map((d) => d['_id'])).toEqual(
      [],
    );
    expect((await items.find({ ds: 'b', v: { $lte: 1 } }).toArray()).map((d) => d['_id'])).toEqual([
      'b3',
    ]);
  });

  it('when an inclusion projection has dotted paths into a subdocument, then missing, null and array values come back as MongoDB shapes them', async () => {
    const coll = h.db.collection<AnyIdDoc>('projected');
    const when = new Date(1000);
    await coll.insertMany([
      {
        _id: 1,
        itemId: 'x',
        hash: 'h',
        version: new Long(3),
        data: { big: 'x'.repeat(100) },
        prev: null,
        isDeleted: false,
      },
      {
        _id: 2,
        itemId: 'y',
        version: 2,
        prev: { version: new Int32(1), hash: 'p', isDeleted: true, data: { a: 1 }, when },
      },
      { _id: 3, itemId: 'z', prev: { data: 1 } },
      { _id: 4, itemId: 'w', prev: [{ version: 1, data: 2 }, 5, { hash: 'q' }] },
      { _id: 5, prev: 'scalar' },
      { _id: 6, prev: { version: { deep: 1 }, hash: [1, 2] } },
    ]);
    const projection = {
      _id: 0,
      itemId: 1,
      hash: 1,
      isDeleted: 1,
      version: 1,
      'prev.version': 1,
      'prev.hash': 1,
      'prev.isDeleted': 1,
    };
    const docs = await coll.find({}, { projection, batchSize: 2 }).sort({ _id: 1 }).toArray();
    expect(docs).toEqual([
      { itemId: 'x', hash: 'h', version: 3, isDeleted: false },
      { itemId: 'y', version: 2, prev: { version: 1, hash: 'p', isDeleted: true } },
      { itemId: 'z', prev: {} },
      { itemId: 'w', prev: [{ version: 1 }, { hash: 'q' }] },
      {},
      { prev: { version: { deep: 1 }, hash: [1, 2] } },
    ]);
    const raw = await coll
      .find({ _id: 1 }, { projection: { version: 1 }, promoteLongs: false })
      .toArray();
    expect(raw).toEqual([{ _id: 1, version: new Long(3) }]);
    expect(
      await coll.find({ _id: 2 }, { projection: { 'prev.when': 1, 'prev.data.a': 1 } }).toArray(),
    ).toEqual([{ _id: 2, prev: { data: { a: 1 }, when } }]);
    expect(
      await coll
        .find({ _id: { $in: [1, 2] } }, { projection: { _id: 1 } })
        .sort({ _id: 1 })
        .toArray(),
    ).toEqual([{ _id: 1 }, { _id: 2 }]);
  });

  it('when an exclusion projection has dotted paths, then the rest comes back in stored order', async () => {
    const coll = h.db.collection<AnyIdDoc>('excluded');
    await coll.insertMany([
      { _id: 1, a: 1, data: { x: 1, y: 2 }, prev: { data: { x: 1 }, hash: 'p' }, z: 3 },
      { _id: 2, a: 2, prev: null },
      { _id: 3, prev: [{ data: 1, keep: 2 }] },
    ]);
    const docs = await coll
      .find({}, { projection: { data: 0, 'prev.data': 0 } })
      .sort({ _id: 1 })
      .toArray();
    expect(docs).toEqual([
      { _id: 1, a: 1, prev: { hash: 'p' }, z: 3 },
      { _id: 2, a: 2, prev: null },
      { _id: 3, prev: [{ keep: 2 }] },
    ]);
    expect(await coll.find({ _id: 1 }, { projection: { _id: 0 } }).toArray()).toEqual([
      { a: 1, data: { x: 1, y: 2 }, prev: { data: { x: 1 }, hash: 'p' }, z: 3 },
    ]);
    expect(
      await coll.find({ _id: 1 }, { projection: { _id: 0, 'data.y': 0, prev: 0 } }).toArray(),
    ).toEqual([{ a: 1, data: { x: 1 }, z: 3 }]);
  });

  it('when the scalar filter matcher decides a document, then it decides as mingo does (type bracketing, null and missing, $or/$and)', () => {
    const views: Doc[] = [
      { _id: 1, v: 1, s: 'a', b: true, d: new Date(10), n: null },
      { _id: 2, v: 2.5, s: 'b', b: false, d: new Date(20) },
      { _id: 3, v: '2', s: 1, b: 1, d: '2020' },
      { _id: 4, v: [1, 3], s: ['a', 'z'], n: [null] },
      { _id: 5, v: { x: 1 }, s: null, b: null, n: 0 },
      { _id: 6, v: Number.NaN, s: '', d: new Date(10) },
      { _id: 7, v: -Infinity, s: 'ab', b: true },
      { _id: 8, v: new ObjectId(), s: new Long(1) },
      { _id: 9 },
    ];
    const filters: Doc[] = [
      { v: 1 },
      { v: 2 },
      { v: { $gt: 1 } },
      { v: { $gte: 1, $lt: 3 } },
      { v: { $lte: 2.5 } },
      { v: { $ne: 1 } },
      { v: { $eq: '2' } },
      { s: { $gt: 'a' } },
      { s: { $lte: 'ab' } },
      { s: null },
      { s: { $ne: null } },
      { n: null },
      { n: { $ne: null } },
      { b: true },
      { b: { $gt: false } },
      { d: { $gte: new Date(10) } },
      { d: new Date(10) },
      { $or: [{ v: 1 }, { s: 'b' }] },
      { $or: [{ v: { $gt: 2 } }, { n: { $ne: null } }] },
      { $and: [{ v: { $gt: 0 } }, { $or: [{ b: true }, { s: 'b' }] }] },
      {
        s: 'a',
        $or: [
          { v: 1, b: true },
          { v: { $gt: 1 }, n: { $ne: null } },
        ],
      },
      { missing: null, v: { $ne: 'x' } },
      { missing: { $ne: 1 } },
    ];
    for (const filter of filters) {
      const fast = compileScalarFilter(filter);
      expect({ filter, compiled: fast !== undefined }).toEqual({ filter, compiled: true });
      const mingo = new Query(filter, { idKey: '_id' });
      for (const doc of views) {
        const decided = fast?.(doc);
        // Documents of plain scalars (or without the fields) are always decided here.
        if ([1, 2, 9].includes(doc['_id'] as number))
          expect({ filter, id: doc['_id'], decided }).not.toEqual({
            filter,
            id: doc['_id'],
            decided: undefined,
          });
        if (decided === undefined) continue;
        expect({ filter, id: doc['_id'], matches: decided }).toEqual({
          filter,
          id: doc['_id'],
          matches: mingo.test(doc),
        });
      }
    }
    // Anything else is left to mingo entirely.
    for (const filter of [
      { 'a.b': 1 },
      { v: { $in: [1] } },
      { v: { $gt: null } },
      { v: /a/ },
      { $nor: [{ v: 1 }] },
      { v: { $exists: true } },
    ]) {
      expect(compileScalarFilter(filter as Doc)).toBeUndefined();
    }
  });

  it('when the fast projection handles a document, then it equals mingo projection of the same stored document', () => {
    const oid = new ObjectId();
    const docs: Doc[] = [
      { _id: 1, a: new Int32(1), p: null },
      { _id: 2, p: new Double(5) },
      { _id: 3, p: {} },
      { _id: 4, p: { y: new Long(1), x: Decimal128.fromString('2.5') } },
      { _id: 5 },
      { _id: 6, p: [1, { x: 1 }, { y: 2 }, [{ x: 3 }], null] },
      { _id: 7, p: { x: { z: 1, w: 2 } }, a: [1, 2] },
      { _id: 8, p: { x: null }, a: { b: oid } },
      { _id: 9, p: 'str', a: new Date(5) },
      { _id: 10, p: { x: [{ z: 1 }, 2] } },
      { _id: { k: 1 }, p: { x: oid, z: true } },
      { _id: 12, p: { x: { z: { deeper: 1 } }, y: new Date(1) } },
    ];
    const projections: Doc[] = [
      { _id: 0, a: 1, 'p.x': 1 },
      { 'p.x': 1 },
      { 'p.x.z': 1 },
      { 'p.x': 0 },
      { _id: 0 },
      { _id: 1 },
      { a: true },
      { a: 0 },
      { p: 1, a: 1 },
      { a: 0, 'p.x': 0, _id: 0 },
      { 'p.y': 1, 'p.x': 1, _id: 0 },
    ];
    let fastCount = 0;
    for (const projection of projections) {
      const fast = compileFastProjection(projection);
      expect(fast).toBeDefined();
      for (const doc of docs) {
        const out = fast?.(doc);
        if (out === FALLBACK) continue;
        fastCount++;
        const view = toViewDoc(doc);
        const [p] = project([view], toView(projection) as Doc);
        expect({ projection, doc, out }).toEqual({
          projection,
          doc,
          out: followKeyOrder(retype(p, doc), doc),
        });
        expect(Object.keys(out as Doc)).toEqual(
          Object.keys(followKeyOrder(retype(p, doc), doc) as Doc),
        );
      }
    }
    expect(fastCount).toBeGreaterThan(100);
    for (const shape of [
      { a: { $slice: 1 } },
      { 'a.$': 1 },
      { a: 1, b: 0 },
      { a: 1, 'a.b': 1 },
      { a: '$b' },
      { '_id.k': 1 },
      { a: 2 },
      { a: 0, _id: 1 },
    ]) {
      expect(compileFastProjection(shape)).toBeUndefined();
    }
  });

  it('when a cursor is read in batches while its documents change, then it returns the documents as they were when it opened', async () => {
    const coll = h.db.collection<AnyIdDoc>('snapshot');
    await coll.createIndex({ ds: 1, v: 1 });
    await coll.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, ds: 'a', v: 1 })));
    const first = await h.db.command({
      find: 'snapshot',
      filter: { ds: 'a' },
      projection: { _id: 1, v: 1 },
      batchSize: 3,
    });
    expect(first['cursor'].firstBatch).toEqual([
      { _id: 0, v: 1 },
      { _id: 1, v: 1 },
      { _id: 2, v: 1 },
    ]);
    await coll.updateMany({}, { $set: { v: 2 } });
    await coll.deleteOne({ _id: 9 });
    const rest = await h.db.command({
      getMore: cursorId(first),
      collection: 'snapshot',
      batchSize: 100,
    });
    expect(rest['cursor'].nextBatch).toEqual(
      Array.from({ length: 7 }, (_, i) => ({ _id: i + 3, v: 1 })),
    );
    expect(String(rest['cursor'].id)).toBe('0');
  });

  it('when a skip and limit apply without a sort, then they count matches only', async () => {
    const coll = h.db.collection<AnyIdDoc>('skiplimit');
    await coll.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, odd: i % 2 === 1 })));
    const docs = await coll.find({ odd: true }, { skip: 2, limit: 3, batchSize: 2 }).toArray();
    expect(docs.map((d) => d['_id'])).toEqual([5, 7, 9]);
  });

  it('when a top-level field is compared with a scalar, then arrays, numbers of any type, null and missing values match as in MongoDB', async () => {
    const coll = h.db.collection<AnyIdDoc>('equality');
    await coll.insertMany([
      { _id: 1, a: 'x' },
      { _id: 2, a: ['y', 'x'] },
      { _id: 3, a: null },
      { _id: 4 },
      { _id: 5, a: new Long(5) },
      { _id: 6, a: new Double(5) },
      { _id: 7, a: Decimal128.fromString('5') },
      { _id: 8, a: [[5]] },
      { _id: 9, a: true },
      { _id: 10, a: { x: 'x' } },
      { _id: 11, a: [5] },
    ]);
    const ids = async (filter: Filter<AnyIdDoc>) =>
      (await coll.find(filter).sort({ _id: 1 }).toArray()).map((d) => d['_id']);
    expect(await ids({ a: 'x' })).toEqual([1, 2]);
    expect(await ids({ a: 5 })).toEqual([5, 6, 7, 11]);
    expect(await ids({ a: true })).toEqual([9]);
    expect(await ids({ a: false })).toEqual([]);
  });

  it('when a top-level field is read from the stored bytes, then it gives the view value and index key the decoded document gives', () => {
    const values: unknown[] = [
      1,
      -0,
      new Int32(-7),
      new Double(2.5),
      new Double(Number.NaN),
      new Double(Number.POSITIVE_INFINITY),
      Long.fromString('9007199254740993'),
      Long.fromNumber(-42),
      // Longs whose nearest double needs rounding (ties to even), and the extremes.
      Long.fromString('-9007199254740995'),
      Long.fromString('18014398509481990'),
      Long.fromString('4294967295'),
      Long.fromString('-4294967296'),
      Long.MAX_VALUE,
      Long.MIN_VALUE,
      Decimal128.fromString('1.5'),
      'plain',
      'üñí €',
      '',
      true,
      false,
      null,
      new Date(1_700_000_000_123),
      new Date(-5),
      new Date(8.64e15),
      new Date(-8.64e15),
      new Date(-4294967296001),
      new ObjectId(),
      new Binary(Buffer.from([1, 2, 3]), 0),
      new Binary(Buffer.from([4, 5]), 2),
      new UUID(),
      new Timestamp({ t: 5, i: 1 }),
      new BSONRegExp('a.c', 'i'),
      new Code('x'),
      undefined,
      new MinKey(),
      new MaxKey(),
      [1, 2],
      [],
      { a: 1 },
    ];
    for (const value of values) {
      for (const field of ['f', 'ünï']) {
        const doc = { _id: 1, before: 'x', [field]: value, after: 2 };
        const bytes = serialize(doc);
        const view = toViewDoc(doc);
        const read = topValue(bytes, field);
        if (read === OTHER || read === ARRAY) {
          // Left to the decoder: arrays, and values that are not scalars of the fast paths.
          const v = view[field];
          const kind = Array.isArray(v)
            ? ARRAY
            : v !== null && typeof v === 'object' && !(v instanceof Date)
              ? OTHER
              : 'scalar';
          expect({ value, kind }).toEqual({ value, kind: read });
        } else expect({ value, read }).toEqual({ value, read: view[field] });
        const key = topKey(bytes, field);
        if (key !== undefined) expect({ value, key }).toEqual({ value, key: keyOf(view[field]) });
        // The same value in an embedded document, as an index on a dotted path reads it.
        const nested = { _id: 2, t: { x: 0, [field]: value }, u: 5 };
        const nestedKey = keyAtPath(serialize(nested), ['t', field]);
        const atPath = valuesAtPath(toViewDoc(nested), `t.${field}`);
        if (nestedKey === null) expect({ value, atPath }).toEqual({ value, atPath: [undefined] });
        else if (nestedKey !== undefined)
          expect({ value, nestedKey }).toEqual({ value, nestedKey: keyOf(atPath[0]) });
        else
          expect({
            value,
            multi: atPath.length !== 1 || typeof atPath[0] !== 'number',
          }).toBeTruthy();
      }
    }
    // Paths that lead nowhere are missing; arrays on the way are left to the decoder.
    const paths = serialize({ _id: 1, s: 'x', n: null, d: { e: { f: 1 } }, arr: [{ f: 1 }] });
    expect(
      [
        ['s', 'f'],
        ['n', 'f'],
        ['d', 'e', 'f'],
        ['d', 'g'],
        ['arr', 'f'],
      ].map((p) => keyAtPath(paths, p)),
    ).toEqual([null, null, 'n1', null, undefined]);
    const bytes = serialize({ _id: 1, a: 1 });
    expect([topValue(bytes, 'missing'), topKey(bytes, 'missing')]).toEqual([
      undefined,
      keyOf(null),
    ]);
    // A repeated name: the last one, as decoding keeps.
    const repeated = Buffer.concat([
      serialize({ a: 1 }).subarray(0, -1),
      serialize({ a: 'second' }).subarray(4),
    ]);
    repeated.writeInt32LE(repeated.length, 0);
    expect([topValue(repeated, 'a'), topKey(repeated, 'a')]).toEqual(['second', 'ssecond']);
  });

  it('when the keys of several indexes are read in one walk (TopElements), then each is what keyAtPath reads', () => {
    const repeated = Buffer.concat([
      serialize({ a: 1, t: { f: 'first' } }).subarray(0, -1),
      serialize({ a: 'second', ü: true }).subarray(4),
    ]);
    repeated.writeInt32LE(repeated.length, 0);
    const docs = [
      serialize({ _id: 1, s: 'x', n: null, d: { e: { f: 1 } }, arr: [{ f: 1 }], t: { f: 2 } }),
      serialize({ _id: new ObjectId(), a: 5, t: 'not a document', ü: 'ü' }),
      serialize({ t: { x: 0, f: new Date(3) } }),
      repeated,
    ];
    const paths = [
      ['_id'],
      ['s'],
      ['s', 'f'],
      ['n', 'f'],
      ['d', 'e', 'f'],
      ['d', 'g'],
      ['arr'],
      ['arr', 'f'],
      ['a'],
      ['t', 'f'],
      ['ü'],
      ['missing'],
    ];
    const tops = new TopElements([...new Set(paths.map((p) => p[0] as string))]);
    for (const bytes of docs) {
      tops.read(bytes);
      expect(paths.map((p) => tops.keyAtPath(p))).toEqual(paths.map((p) => keyAtPath(bytes, p)));
    }
    // A name it was not built for is not read by it.
    expect(new TopElements(['a']).read(docs[1] as Uint8Array).keyAtPath(['s'])).toBeUndefined();
  });
});
