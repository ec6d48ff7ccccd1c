// Updates made only of $set/$unset on top-level fields (the fast path of update.ts), through the
// official driver. Expected behaviour from the MongoDB manual:
// - "$set" ("If the field does not exist, $set will add a new field"; field order: "update operations
//   ... append new fields" / "Document Field Order" in https://www.mongodb.com/docs/manual/core/document/):
//   https://www.mongodb.com/docs/manual/reference/operator/update/set/
// - "$unset": https://www.mongodb.com/docs/manual/reference/operator/update/unset/
// - "update" command, nModified ("The number of documents updated. If the update operation results
//   in no change to the document ... nModified does not include this document"):
//   https://www.mongodb.com/docs/manual/reference/command/update/
// - unique indexes and partial indexes: https://www.mongodb.com/docs/manual/core/index-unique/,
//   https://www.mongodb.com/docs/manual/core/index-partial/
// - the 16 MiB BSON document limit: https://www.mongodb.com/docs/manual/reference/limits/
// Each update is also run through the general path (the same update plus a `$setOnInsert`, which an
// update without upsert ignores and the fast path does not take) and the stored bytes are compared.
import { BSON, Decimal128, Double, Int32, Long, type Collection, type Document } from 'mongodb';
import { serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

/** `_id` is a string or number in these tests, not the driver's default ObjectId. */
type Loose = { _id: string | number; [k: string]: unknown };

const raw = async (c: Collection<Loose>, filter: Document = {}): Promise<Document[]> =>
  c.find(filter, { promoteValues: false, promoteLongs: false, sort: { _id: 1 } }).toArray();

describe('$set/$unset fast path', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });
  const coll = (name: string): Collection<Loose> => h.db.collection<Loose>(name);

  it('when $set names existing and new fields, then existing ones keep their place and new ones are appended in order', async () => {
    const c = coll('c');
    await c.insertOne({ _id: 1, a: 1, b: 2, c: 3 });
    const res = await c.updateOne(
      { _id: 1 },
      { $set: { z: 0, c: 30, y: 1, a: 10 }, $unset: { b: '' } },
    );
    expect(res).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
    const doc = await c.findOne({ _id: 1 });
    expect(Object.keys(doc ?? {})).toEqual(['_id', 'a', 'c', 'z', 'y']);
    expect(doc).toEqual({ _id: 1, a: 10, c: 30, z: 0, y: 1 });
  });

  it('when $set writes values that are already there, then nModified is 0; a different BSON type or field order is a change', async () => {
    const c = coll('c');
    const when = new Date('2024-05-01T00:00:00Z');
    await c.insertOne({
      _id: 'k',
      version: new Int32(1),
      data: { a: [1, 'x'], b: { c: null } },
      when,
      gone: null,
    });
    const same = await c.updateOne(
      { _id: 'k' },
      {
        $set: {
          version: new Int32(1),
          data: { a: [1, 'x'], b: { c: null } },
          when: new Date(when),
        },
        $unset: { missing: '' },
      },
    );
    expect(same).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    const retyped = await c.updateOne({ _id: 'k' }, { $set: { version: new Double(1) } });
    expect(retyped.modifiedCount).toBe(1);
    const [doc] = await raw(c);
    expect(doc?.['version']).toBeInstanceOf(Double);
    const reordered = await c.updateOne(
      { _id: 'k' },
      { $set: { data: { b: { c: null }, a: [1, 'x'] } } },
    );
    expect(reordered.modifiedCount).toBe(1);
    expect((await c.updateOne({ _id: 'k' }, { $unset: { gone: 1 } })).modifiedCount).toBe(1);
  });

  it('when the filter names a version the document no longer has, then nothing is updated', async () => {
    const c = coll('c');
    await c.insertOne({ _id: 'k', version: 2, hash: 'h2' });
    const res = await c.updateOne({ _id: 'k', version: 1 }, { $set: { version: 3, hash: 'h3' } });
    expect(res).toMatchObject({ matchedCount: 0, modifiedCount: 0 });
    expect(await c.findOne({ _id: 'k' })).toEqual({ _id: 'k', version: 2, hash: 'h2' });
  });

  it('when $set would duplicate a unique key, then it fails with E11000 and neither the document nor the indexes change', async () => {
    const c = coll('c');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.createIndex({ group: 1, n: 1 });
    await c.insertMany([
      { _id: 1, email: 'a@x', group: 'g', n: 1 },
      { _id: 2, email: 'b@x', group: 'g', n: 2 },
    ]);
    const err = await serverError(c.updateOne({ _id: 2 }, { $set: { n: 5, email: 'a@x' } }));
    expect(err.code).toBe(11000);
    expect(err.message).toContain('index: email_1 dup key: { email: "a@x" }');
    expect(await c.findOne({ _id: 2 })).toEqual({
      _id: 2,
      email: 'b@x',
      group: 'g',
      n: 2,
    });
    expect(await c.find({ group: 'g', n: 2 }).toArray()).toHaveLength(1);
    expect(await c.find({ group: 'g', n: 5 }).toArray()).toHaveLength(0);
    expect(await c.find({ email: 'b@x' }).toArray()).toHaveLength(1);
  });

  it('when $set changes a field a partial unique index filters on, then the index is checked and kept up to date', async () => {
    const c = coll('c');
    await c.createIndex({ email: 1 }, { unique: true, partialFilterExpression: { active: true } });
    await c.insertMany([
      { _id: 1, email: 'a@x', active: true },
      { _id: 2, email: 'a@x', active: false },
    ]);
    expect((await serverError(c.updateOne({ _id: 2 }, { $set: { active: true } }))).code).toBe(
      11000,
    );
    await c.updateOne({ _id: 1 }, { $unset: { active: '' } });
    expect((await c.updateOne({ _id: 2 }, { $set: { active: true } })).modifiedCount).toBe(1);
  });

  it('when $set changes indexed fields, then lookups through every index see the new values only', async () => {
    const c = coll('c');
    await c.createIndex({ dataset: 1, version: 1 });
    await c.createIndex({ dataset: 1, isDeleted: 1, version: 1, itemId: 1 });
    await c.insertOne({ _id: 'd:1', dataset: 'd', itemId: '1', version: 1, isDeleted: false });
    await c.updateOne({ _id: 'd:1', version: 1 }, { $set: { version: 2, isDeleted: true } });
    expect(await c.countDocuments({ dataset: 'd', version: 1 })).toBe(0);
    expect(await c.countDocuments({ dataset: 'd', version: 2 })).toBe(1);
    expect(await c.countDocuments({ dataset: 'd', isDeleted: true, version: 2, itemId: '1' })).toBe(
      1,
    );
    expect(await c.countDocuments({ dataset: 'd', isDeleted: false, version: { $gte: 1 } })).toBe(
      0,
    );
  });

  it('when $set changes _id, then it is ImmutableField (66); the same _id is allowed', async () => {
    const c = coll('c');
    await c.insertOne({ _id: 'k', a: 1 });
    expect(
      (await serverError(c.updateOne({ _id: 'k' }, { $set: { _id: 'other', a: 2 } }))).code,
    ).toBe(66);
    expect((await c.updateOne({ _id: 'k' }, { $set: { _id: 'k', a: 2 } })).modifiedCount).toBe(1);
    expect(await c.findOne({ _id: 'k' })).toEqual({ _id: 'k', a: 2 });
  });

  it('when $set would grow a document beyond 16 MiB, then it fails with 17419 and the document is unchanged', async () => {
    const c = coll('c');
    await c.insertOne({ _id: 1, a: 'x'.repeat(9 * 1024 * 1024) });
    const err = await serverError(
      c.updateOne({ _id: 1 }, { $set: { b: 'y'.repeat(8 * 1024 * 1024) } }),
    );
    expect(err.code).toBe(17419);
    expect(Object.keys((await c.findOne({ _id: 1 })) ?? {})).toEqual(['_id', 'a']);
  });

  it('when updateMany and findOneAndUpdate use $set, then they give the same results as the general path', async () => {
    const fast = coll('fast');
    const slow = coll('slow');
    for (const c of [fast, slow])
      await c.insertMany([
        { _id: 1, g: 'a', n: 1 },
        { _id: 2, g: 'a', n: 2 },
        { _id: 3, g: 'b' },
      ]);
    const many = await fast.updateMany({ g: 'a' }, { $set: { n: 2, m: 'new' } });
    const manySlow = await slow.updateMany(
      { g: 'a' },
      { $set: { n: 2, m: 'new' }, $setOnInsert: { never: 1 } },
    );
    expect(many).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
    expect(manySlow).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
    const after = await fast.findOneAndUpdate(
      { _id: 3 },
      { $set: { z: 1, g: 'c' } },
      { returnDocument: 'after' },
    );
    const afterSlow = await slow.findOneAndUpdate(
      { _id: 3 },
      { $set: { z: 1, g: 'c' }, $setOnInsert: { never: 1 } },
      { returnDocument: 'after' },
    );
    expect(Object.keys(after ?? {})).toEqual(['_id', 'g', 'z']);
    expect(after).toEqual(afterSlow);
    expect(BSON.serialize({ d: await raw(fast) })).toEqual(BSON.serialize({ d: await raw(slow) }));
  });

  it('when refsync-shaped and mixed-type $set/$unset updates run on both paths, then the stored documents are byte-identical', async () => {
    const fast = coll('fast');
    const slow = coll('slow');
    const when = new Date('2024-01-01T00:00:00Z');
    const docs = Array.from({ length: 6 }, (_, i) => ({
      _id: `g:${i}`,
      dataset: 'g',
      itemId: String(i),
      version: new Int32(1),
      data: {
        name: `n${i}`,
        list: [1, 'a', { x: new Double(1.5) }],
        big: Long.fromString('9007199254740993'),
      },
      hash: 'a'.repeat(64),
      isDeleted: false,
      lastChanged: when,
      prev: null,
    }));
    for (const c of [fast, slow]) {
      await c.createIndex({ dataset: 1, version: 1 });
      await c.insertMany(docs.map((d) => ({ ...d })));
    }
    const updates: [Document, Document][] = [
      [
        { _id: 'g:0', version: 1 },
        {
          $set: {
            version: new Int32(2),
            data: { name: 'n0b', list: [] },
            hash: 'b'.repeat(64),
            isDeleted: false,
            lastChanged: new Date(),
            prev: { version: new Int32(1), hash: 'a'.repeat(64), data: docs[0]?.data },
          },
        },
      ],
      [{ _id: 'g:1', version: 1 }, { $set: { version: new Int32(1), hash: 'a'.repeat(64) } }],
      [
        { _id: 'g:2' },
        {
          $set: {
            version: Long.fromNumber(1),
            extra: new Decimal128('1.10'),
            nested: { b: 1, a: [null, true] },
          },
        },
      ],
      [{ _id: 'g:3' }, { $unset: { prev: '', nothing: '' }, $set: { isDeleted: true } }],
      [{ _id: 'g:4' }, { $set: { data: docs[4]?.data, lastChanged: when } }],
      [
        { _id: 'g:5' },
        { $set: { version: 3, data: 'now a string', added: [new Int32(7), new Double(7)] } },
      ],
      [{ _id: 'g:0', version: 1 }, { $set: { version: new Int32(9) } }],
      [{ _id: 'g:0', version: 2 }, { $set: { version: new Int32(3) } }],
    ];
    const counts: [number, number][] = [];
    const countsSlow: [number, number][] = [];
    for (const [filter, update] of updates) {
      const r = await fast.updateOne(filter, update);
      counts.push([r.matchedCount, r.modifiedCount]);
      const s = await slow.updateOne(filter, { ...update, $setOnInsert: { never: 1 } });
      countsSlow.push([s.matchedCount, s.modifiedCount]);
    }
    expect(counts).toEqual(countsSlow);
    expect(counts).toEqual([
      [1, 1],
      [1, 0],
      [1, 1],
      [1, 1],
      [1, 0],
      [1, 1],
      [0, 0],
      [1, 1],
    ]);
    expect(BSON.serialize({ d: await raw(fast) })).toEqual(BSON.serialize({ d: await raw(slow) }));
    const bulk = await fast.bulkWrite(
      [
        {
          updateOne: {
            filter: { _id: 'g:1', version: 1 },
            update: { $set: { version: 2, hash: 'c' } },
          },
        },
        { updateOne: { filter: { _id: 'g:2', version: 5 }, update: { $set: { version: 6 } } } },
      ],
      { ordered: false },
    );
    expect(bulk).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
    expect(await fast.countDocuments({ dataset: 'g', version: 2 })).toBe(1);
  });
});
