// The mongoose checklist from issue 3's "Done when": CRUD, unique-index errors on create, update and
// unordered insertMany, upserts, bulkWrite, cursors over 250 documents, aggregate, countDocuments,
// distinct, syncIndexes, positional and arrayFilters updates, all through mongoose 9.
// Expected behaviour from the MongoDB manual (pages named per test) and the mongoose docs
// (https://mongoosejs.com/docs/api/model.html).
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import { start, type RunningMongoServer } from '../src/index';

interface Person {
  email: string;
  name: string;
  age?: number;
  tags: string[];
  scores: Array<{ subject: string; score: number }>;
}

const personSchema = new Schema<Person>({
  email: { type: String, required: true, unique: true },
  name: { type: String, required: true },
  age: Number,
  tags: [String],
  scores: [{ _id: false, subject: String, score: Number }],
});
personSchema.index({ name: 1, age: -1 });

describe('mongoose 9 checklist', () => {
  let server: RunningMongoServer;
  let conn: Connection;
  let People: Model<Person>;

  beforeEach(async () => {
    server = await start({ port: 0 });
    conn = await mongoose.createConnection(`${server.uri}/checklist`).asPromise();
    People = conn.model<Person>('Person', personSchema);
    await People.init(); // creates the collection and the schema's indexes
  });
  afterEach(async () => {
    await conn.close();
    await server.stop();
  });

  it('when documents are created, read, updated and deleted, then each step is visible', async () => {
    // "MongoDB CRUD Operations": https://www.mongodb.com/docs/manual/crud/
    const created = await People.create({ email: 'ada@x', name: 'Ada', age: 36 });
    expect(created._id).toBeDefined();
    expect(await People.findById(created._id).lean()).toMatchObject({
      email: 'ada@x',
      name: 'Ada',
      age: 36,
    });
    expect(await People.findOne({ name: 'Ada' }).select('email -_id').lean()).toEqual({
      email: 'ada@x',
    });
    const upd = await People.updateOne({ _id: created._id }, { $set: { age: 37 } });
    expect(upd.modifiedCount).toBe(1);
    const doc = await People.findOneAndUpdate(
      { email: 'ada@x' },
      { $inc: { age: 1 } },
      { returnDocument: 'after' },
    ).lean();
    expect(doc?.age).toBe(38);
    created.name = 'Ada L.';
    await created.save();
    expect((await People.findById(created._id).lean())?.name).toBe('Ada L.');
    expect((await People.deleteOne({ _id: created._id })).deletedCount).toBe(1);
    expect(await People.findById(created._id)).toBeNull();
  });

  it('when create hits a unique index, then mongoose reports E11000 with keyValue', async () => {
    // "Unique Indexes": https://www.mongodb.com/docs/manual/core/index-unique/
    await People.create({ email: 'dup@x', name: 'A' });
    await expect(People.create({ email: 'dup@x', name: 'B' })).rejects.toMatchObject({
      code: 11000,
      keyPattern: { email: 1 },
      keyValue: { email: 'dup@x' },
    });
  });

  it('when an update hits a unique index, then it fails with 11000', async () => {
    await People.create([
      { email: 'a@x', name: 'A' },
      { email: 'b@x', name: 'B' },
    ]);
    await expect(
      People.updateOne({ email: 'b@x' }, { $set: { email: 'a@x' } }),
    ).rejects.toMatchObject({ code: 11000 });
    await expect(People.findOneAndUpdate({ email: 'b@x' }, { email: 'a@x' })).rejects.toMatchObject(
      { code: 11000 },
    );
  });

  it('when insertMany is unordered and has duplicates, then the rest are inserted and the errors are indexed', async () => {
    // "db.collection.insertMany()" ordered: false: https://www.mongodb.com/docs/manual/reference/method/db.collection.insertMany/
    await People.create({ email: 'taken@x', name: 'T' });
    const err = (await People.insertMany(
      [
        { email: 'n1@x', name: 'N1' },
        { email: 'taken@x', name: 'dup' },
        { email: 'n2@x', name: 'N2' },
      ],
      { ordered: false },
    ).catch((e: unknown) => e)) as {
      code: number;
      writeErrors: Array<{ index: number; err: { code: number } }>;
      insertedDocs: unknown[];
    };
    expect(err.code).toBe(11000);
    expect(err.writeErrors.map((e) => e.index)).toEqual([1]);
    expect(await People.countDocuments()).toBe(3);
  });

  it('when upserts insert and then update, then upsertedId and counts follow', async () => {
    // "Upsert" in db.collection.updateOne(): https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/
    const first = await People.updateOne(
      { email: 'u@x' },
      { $set: { age: 1 }, $setOnInsert: { name: 'Upserted' } },
      { upsert: true },
    );
    expect(first.upsertedCount).toBe(1);
    expect(first.upsertedId).toBeDefined();
    const second = await People.updateOne(
      { email: 'u@x' },
      { $set: { age: 2 }, $setOnInsert: { name: 'No' } },
      { upsert: true },
    );
    expect(second).toMatchObject({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0 });
    expect(await People.findOne({ email: 'u@x' }).lean()).toMatchObject({
      name: 'Upserted',
      age: 2,
    });
    const fam = await People.findOneAndUpdate(
      { email: 'v@x' },
      { $set: { name: 'V' } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    expect(fam).toMatchObject({ email: 'v@x', name: 'V' });
  });

  it('when bulkWrite mixes operations, then the result counts each kind', async () => {
    // "db.collection.bulkWrite()": https://www.mongodb.com/docs/manual/reference/method/db.collection.bulkWrite/
    await People.create({ email: 'x@x', name: 'X', age: 1 });
    const res = await People.bulkWrite([
      { insertOne: { document: { email: 'y@x', name: 'Y' } } },
      { updateOne: { filter: { email: 'x@x' }, update: { $inc: { age: 1 } } } },
      { updateMany: { filter: {}, update: { $set: { tags: ['t'] } } } },
      { replaceOne: { filter: { email: 'y@x' }, replacement: { email: 'y@x', name: 'Y2' } } },
      { updateOne: { filter: { email: 'z@x' }, update: { $set: { name: 'Z' } }, upsert: true } },
      { deleteOne: { filter: { email: 'x@x' } } },
    ]);
    expect(res.insertedCount).toBe(1);
    expect(res.matchedCount).toBe(4);
    expect(res.modifiedCount).toBe(4);
    expect(res.upsertedCount).toBe(1);
    expect(res.deletedCount).toBe(1);
    await expect(
      People.bulkWrite([{ insertOne: { document: { email: 'y@x', name: 'again' } } }], {
        ordered: false,
      }),
    ).rejects.toMatchObject({ code: 11000 });
  });

  it('when 250 documents are iterated with a cursor, then all arrive over several batches', async () => {
    // "Iterate a Cursor": https://www.mongodb.com/docs/manual/tutorial/iterate-a-cursor/
    await People.insertMany(
      Array.from({ length: 250 }, (_, i) => ({ email: `p${i}@x`, name: `P${i}`, age: i })),
    );
    const seen: number[] = [];
    for await (const p of People.find().sort({ age: 1 }).batchSize(40).cursor())
      seen.push(p.age as number);
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i));
    expect(await People.find({ age: { $gte: 100 } })).toHaveLength(150);
  });

  it('when aggregate, countDocuments and distinct run, then they agree with the data', async () => {
    // "Aggregation Pipeline": https://www.mongodb.com/docs/manual/core/aggregation-pipeline/ ;
    // "countDocuments", "distinct": https://www.mongodb.com/docs/manual/reference/method/db.collection.countDocuments/ ,
    // https://www.mongodb.com/docs/manual/reference/command/distinct/
    await People.create([
      { email: 'a@x', name: 'A', age: 30, tags: ['x', 'y'] },
      { email: 'b@x', name: 'B', age: 40, tags: ['y'] },
      { email: 'c@x', name: 'C', age: 50, tags: [] },
    ]);
    const groups = await People.aggregate<{ _id: string; n: number; avgAge: number }>([
      { $unwind: '$tags' },
      { $group: { _id: '$tags', n: { $sum: 1 }, avgAge: { $avg: '$age' } } },
      { $sort: { _id: 1 } },
    ]);
    expect(groups).toEqual([
      { _id: 'x', n: 1, avgAge: 30 },
      { _id: 'y', n: 2, avgAge: 35 },
    ]);
    expect(await People.countDocuments({ age: { $gt: 35 } })).toBe(2);
    expect((await People.distinct('tags')).sort()).toEqual(['x', 'y']);
    expect(await People.estimatedDocumentCount()).toBe(3);
  });

  it('when syncIndexes runs after the schema changes, then extra indexes are dropped and missing ones built', async () => {
    // "createIndexes", "dropIndexes", "listIndexes": https://www.mongodb.com/docs/manual/reference/command/createIndexes/
    await conn.collection('people').createIndex({ legacy: 1 });
    const dropped = await People.syncIndexes();
    expect(dropped).toEqual(['legacy_1']);
    const names = (await People.listIndexes()).map((i) => i.name).sort();
    expect(names).toEqual(['_id_', 'email_1', 'name_1_age_-1']);
    expect(await People.syncIndexes()).toEqual([]);
    const diff = await People.diffIndexes();
    expect(diff).toEqual({ toDrop: [], toCreate: [] });
  });

  it('when positional and arrayFilters updates run, then the right array elements change', async () => {
    // "$ (update)": https://www.mongodb.com/docs/manual/reference/operator/update/positional/ ;
    // "$[<identifier>]": https://www.mongodb.com/docs/manual/reference/operator/update/positional-filtered/
    await People.create({
      email: 's@x',
      name: 'S',
      scores: [
        { subject: 'math', score: 50 },
        { subject: 'art', score: 90 },
        { subject: 'music', score: 40 },
      ],
    });
    await People.updateOne(
      { email: 's@x', 'scores.subject': 'art' },
      { $set: { 'scores.$.score': 95 } },
    );
    await People.updateOne(
      { email: 's@x' },
      { $inc: { 'scores.$[low].score': 10 } },
      { arrayFilters: [{ 'low.score': { $lt: 60 } }] },
    );
    const doc = await People.findOne({ email: 's@x' }).lean();
    expect(doc?.scores).toEqual([
      { subject: 'math', score: 60 },
      { subject: 'art', score: 95 },
      { subject: 'music', score: 50 },
    ]);
  });
});
