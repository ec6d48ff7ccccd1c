// Conformance, command by command: each test asserts a result the MongoDB 8.0 manual documents and
// names the page (and the behaviour) it comes from, so a regression shows as a named behaviour.
// Pages (https://www.mongodb.com/docs/manual/...):
//   core/dot-dollar-considerations/ (+ /dollar-prefix/, /periods/)  "Field Names with Periods and Dollar Signs"
//   reference/command/insert/ , reference/method/db.collection.insertMany/
//   reference/command/find/ , reference/method/cursor.sort/ , tutorial/query-for-null-fields/
//   reference/command/update/ , reference/operator/update/ , tutorial/update-documents-with-aggregation-pipeline/
//   reference/command/delete/ , reference/command/findAndModify/ , reference/method/db.collection.bulkWrite/
//   reference/operator/aggregation-pipeline/ , reference/command/aggregate/
//   reference/command/createIndexes/ , core/index-unique/ , reference/command/dropIndexes/
//   reference/command/getMore/ , reference/command/killCursors/ , reference/aggregation-variables/
import { Int32, Long, MongoBulkWriteError, type Collection, type Document } from 'mongodb';
import { cursorId, serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('conformance with the MongoDB 8.0 manual', () => {
  let h: DriverHarness;
  // _id of any type (the tests use numbers and strings, as MongoDB allows).
  let c: Collection<Document & { _id?: number | string | Document }>;
  beforeEach(async () => {
    h = await startWithDriver();
    c = h.db.collection('c');
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  describe('insert', () => {
    it('when a document has top-level $-prefixed and dotted field names, then it is stored with them (dot-dollar-considerations: "permitted as top level and nested field names for inserts")', async () => {
      await c.insertOne({ _id: 1, $price: 50, 'a.b': 2, nested: { $inc: true, 'x.y': 1 } });
      expect(await c.findOne({ _id: 1 })).toEqual({
        _id: 1,
        $price: 50,
        'a.b': 2,
        nested: { $inc: true, 'x.y': 1 },
      });
    });

    it('when _id is a document holding a $-prefixed field, then the insert is refused with DollarPrefixedFieldName 52 (general restrictions: not "a subfield in an _id document")', async () => {
      const err = await serverError(c.insertOne({ _id: { $x: 1 } as never }));
      expect(err.code).toBe(52);
      expect(await c.countDocuments()).toBe(0);
    });

    it('when a document has no _id, then one is generated and stored as the first field (insert: "_id field ... added")', async () => {
      await h.db.command({ insert: 'c', documents: [{ a: 1 }] });
      const [doc] = await c.find().toArray();
      expect(Object.keys(doc as Document)).toEqual(['_id', 'a']);
    });

    it('when an ordered insertMany hits a duplicate _id, then it stops there and earlier documents stay (insertMany: ordered)', async () => {
      const err = await c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MongoBulkWriteError);
      expect((err as MongoBulkWriteError).writeErrors).toMatchObject([{ index: 1, code: 11000 }]);
      expect(await c.countDocuments()).toBe(1);
    });

    it('when an unordered insertMany hits a duplicate _id, then the others are inserted (insertMany: ordered false)', async () => {
      await c
        .insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }], { ordered: false })
        .catch(() => undefined);
      expect(await c.countDocuments()).toBe(2);
    });
  });

  describe('find', () => {
    beforeEach(async () => {
      await c.insertMany([
        { _id: 1, a: 3, s: 'b' },
        { _id: 2, a: 1, s: 'a' },
        { _id: 3, a: 2, s: null },
        { _id: 4, a: 2 },
      ]);
    });

    it('when sorted, skipped and limited, then sort applies first, then skip, then limit (cursor.sort / cursor.skip)', async () => {
      const docs = await c.find({}).sort({ a: 1, _id: -1 }).skip(1).limit(2).toArray();
      expect(docs.map((d) => d._id)).toEqual([4, 3]);
    });

    it('when the filter is {s: null}, then documents with null and without s match (query-for-null-fields: "Equality Filter")', async () => {
      expect((await c.find({ s: null }).toArray()).map((d) => d._id)).toEqual([3, 4]);
    });

    it('when the filter is {s: {$exists: false}}, then only the document without s matches (query-for-null-fields: "Existence Check")', async () => {
      expect((await c.find({ s: { $exists: false } }).toArray()).map((d) => d._id)).toEqual([4]);
    });

    it('when an inclusion projection omits _id, then _id is still returned (project-fields-from-query-results: "_id field is returned by default")', async () => {
      expect(await c.findOne({ _id: 1 }, { projection: { a: 1 } })).toEqual({ _id: 1, a: 3 });
    });

    it('when sorting by a field some documents lack, then missing sorts as null, before numbers and strings (sort order: "BSON comparison order")', async () => {
      const docs = await c.find({}).sort({ s: 1, _id: 1 }).toArray();
      expect(docs.map((d) => d._id)).toEqual([3, 4, 2, 1]);
    });

    it('when values of several types are sorted, then they follow the BSON comparison order, strings by code point (sort: "Comparison/Sort Order")', async () => {
      const t = h.db.collection<Document & { _id: number }>('types');
      await t.insertMany([
        { _id: 1, v: true },
        { _id: 2, v: 'é' },
        { _id: 3, v: new Date(5) },
        { _id: 4, v: 2.5 },
        { _id: 5, v: '\u{1F600}' },
        { _id: 6, v: null },
        { _id: 7, v: Number.NaN },
        { _id: 8, v: '\uFFFD' },
        { _id: 9, v: false },
        { _id: 10, v: -Infinity },
        { _id: 11, v: 'a' },
        { _id: 12, v: new Date(1) },
        { _id: 13 },
        { _id: 14, v: new Int32(1) },
      ]);
      const asc = (await t.find({}).sort({ v: 1 }).toArray()).map((d) => d._id);
      expect(asc.slice(0, 2).sort((a, b) => a - b)).toEqual([6, 13]); // null and missing are equal
      expect(asc.slice(2)).toEqual([7, 10, 14, 4, 11, 2, 8, 5, 9, 1, 12, 3]);
      const desc = (await t.find({}).sort({ v: -1 }).toArray()).map((d) => d._id);
      expect(desc.slice(0, 12)).toEqual([3, 12, 1, 9, 5, 8, 2, 11, 4, 14, 10, 7]);
      expect(desc.slice(12).sort((a, b) => a - b)).toEqual([6, 13]);
      // A compound sort orders by the second field within equal first ones.
      const both = await t
        .find({ _id: { $in: [4, 11, 14] } })
        .sort({ missing: 1, v: -1 })
        .toArray();
      expect(both.map((d) => d._id)).toEqual([11, 4, 14]);
    });

    it('when hinted {$natural: -1}, then find returns documents in reverse natural order and deleteOne takes the last (hint: $natural)', async () => {
      expect((await c.find({}).hint({ $natural: -1 }).toArray()).map((d) => d._id)).toEqual([
        4, 3, 2, 1,
      ]);
      expect((await c.find({}).hint({ $natural: 1 }).toArray()).map((d) => d._id)).toEqual([
        1, 2, 3, 4,
      ]);
      const agg = await c
        .aggregate([{ $project: { _id: 1 } }], { hint: { $natural: -1 } })
        .toArray();
      expect(agg.map((d) => d._id)).toEqual([4, 3, 2, 1]);
      await c.deleteOne({ a: 2 }, { hint: { $natural: -1 } });
      expect((await c.find({}).toArray()).map((d) => d._id)).toEqual([1, 2, 3]);
    });

    it('when find uses let, then $$ variables hold the evaluated expressions (find: let)', async () => {
      const docs = await c
        .find({ $expr: { $eq: ['$a', '$$two'] } }, { let: { two: { $subtract: [5, 3] } } })
        .toArray();
      expect(docs.map((d) => d._id)).toEqual([3, 4]);
    });

    it('when let names a variable that starts with an upper-case letter, then find is refused (aggregation-variables: user variable names start with a lowercase letter)', async () => {
      const err = await serverError(c.find({}, { let: { Bad: 1 } }).toArray());
      expect(err.code).toBe(16867);
    });
  });

  describe('update with operators', () => {
    beforeEach(async () => {
      await c.insertOne({ _id: 1, n: 1, tags: ['a'], o: { x: 1 }, old: 5, gone: true });
    });

    it('when $set, $inc, $push, $unset and $rename are combined on different paths, then each applies (update operators)', async () => {
      await c.updateOne(
        { _id: 1 },
        {
          $set: { 'o.y': 2 },
          $inc: { n: 2 },
          $push: { tags: 'b' } as Document,
          $rename: { old: 'renamed' },
          $unset: { gone: '' },
        },
      );
      expect(await c.findOne({ _id: 1 })).toEqual({
        _id: 1,
        n: 3,
        tags: ['a', 'b'],
        o: { x: 1, y: 2 },
        renamed: 5,
      });
    });

    it('when two operators name the same path, then ConflictingUpdateOperators 40 and nothing changes (update: "would create a conflict")', async () => {
      const err = await serverError(
        c.updateOne({ _id: 1 }, { $set: { 'o.y': 2 }, $rename: { o: 'p' } }),
      );
      expect(err.code).toBe(40);
      expect(await c.findOne({ _id: 1 })).toMatchObject({ o: { x: 1 } });
    });

    it('when $addToSet adds an existing value and $min a larger one, then the document is matched but not modified (update: nModified)', async () => {
      const res = await c.updateOne({ _id: 1 }, { $addToSet: { tags: 'a' }, $min: { n: 5 } });
      expect(res).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    });

    it('when $mul multiplies an int32 by an int32, then the result stays an int32 ($mul: "multiplication with values of mixed numeric types")', async () => {
      await c.updateOne({ _id: 1 }, { $mul: { n: new Int32(4) } });
      const raw = await c.findOne({ _id: 1 }, { promoteValues: false });
      expect(raw?.['n']).toEqual(new Int32(4));
    });

    it('when a replacement document has a top-level $-prefixed field, then it is refused with 52 (dollar-prefix: "Document Replacing Updates")', async () => {
      const err = await serverError(c.replaceOne({ _id: 1 }, { a: 1, $b: 2 }));
      expect(err.code).toBe(52);
      expect(await c.findOne({ _id: 1 })).toMatchObject({ n: 1 });
    });

    it('when an upsert inserts with $set of a top-level $-prefixed field, then it is stored; when it matches a document, then 52 (dollar-prefix: "Upserts can accept dollar ($) prefixed fields")', async () => {
      await c.updateOne(
        { date: '2021-07-07' },
        { $set: { phone: 25.17, $hotel: 320.1 } },
        { upsert: true },
      );
      expect(await c.findOne({ date: '2021-07-07' }, { projection: { _id: 0 } })).toEqual({
        date: '2021-07-07',
        phone: 25.17,
        $hotel: 320.1,
      });
      const err = await serverError(
        c.updateOne({ date: '2021-07-07' }, { $set: { phone: 1, $hotel: 1 } }, { upsert: true }),
      );
      expect(err.code).toBe(52);
      expect(await c.findOne({ date: '2021-07-07' }, { projection: { _id: 0 } })).toEqual({
        date: '2021-07-07',
        phone: 25.17,
        $hotel: 320.1,
      });
    });

    it('when an operator modifies an embedded $-prefixed field, then it is updated (dollar-prefix: "Document Modifying Updates")', async () => {
      await c.insertOne({
        _id: 'E123',
        address: { $number: 123, $street: 'Elm Road' },
        pricing: { $discount: 60 },
      });
      await c.updateOne(
        { _id: 'E123' },
        { $set: { 'address.$street': 'Elm Ave' }, $inc: { 'pricing.$discount': 10 } },
      );
      expect(await c.findOne({ _id: 'E123' })).toEqual({
        _id: 'E123',
        address: { $number: 123, $street: 'Elm Ave' },
        pricing: { $discount: 70 },
      });
    });

    it('when a replacement document has a dotted top-level field, then it is stored (periods: "insert ... or replace")', async () => {
      await c.replaceOne({ _id: 1 }, { 'a.b': 1 });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, 'a.b': 1 });
    });

    it('when updateOne has a sort (new in 8.0), then the first document in that order is updated (update: sort)', async () => {
      await c.insertMany([
        { _id: 2, n: 5 },
        { _id: 3, n: 9 },
      ]);
      await c.updateOne({}, { $set: { picked: true } }, { sort: { n: -1 } });
      expect((await c.find({ picked: true }).toArray()).map((d) => d._id)).toEqual([3]);
    });

    it('when an update statement has sort and multi true, then it is refused with FailedToParse 9 (update: "Cannot specify sort with multi=true")', async () => {
      const res = await h.db.command({
        update: 'c',
        updates: [{ q: {}, u: { $set: { z: 1 } }, multi: true, sort: { n: 1 } }],
      });
      expect(res['writeErrors']).toMatchObject([
        { code: 9, errmsg: 'Cannot specify sort with multi=true' },
      ]);
    });

    it('when an update matches nothing and upsert is set, then the equality fields and $setOnInsert form the new document (upsert behaviour)', async () => {
      const res = await c.updateOne(
        { k: 'x', n: { $gt: 1 } },
        { $set: { v: 1 }, $setOnInsert: { created: true } },
        { upsert: true },
      );
      expect(await c.findOne({ _id: res.upsertedId as never })).toEqual({
        _id: res.upsertedId,
        k: 'x',
        v: 1,
        created: true,
      });
    });
  });

  describe('update with an aggregation pipeline', () => {
    beforeEach(async () => {
      await c.insertOne({ _id: 1, a: 1, b: 2 });
    });

    it('when $replaceWith uses $setField to set a top-level $-prefixed field, then it is stored (dollar-prefix: "Updates Using Aggregation Pipelines")', async () => {
      await c.updateOne({ _id: 1 }, [
        {
          $replaceWith: { $setField: { field: { $literal: '$price' }, input: '$$ROOT', value: 9 } },
        },
      ]);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 1, b: 2, $price: 9 });
    });

    it('when $setField sets a dotted top-level field, then it is stored as one field, not a path ($setField)', async () => {
      await c.updateOne({ _id: 1 }, [
        { $replaceWith: { $setField: { field: 'x.y', input: '$$ROOT', value: 3 } } },
      ]);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 1, b: 2, 'x.y': 3 });
    });

    it('when the new root has no _id, then the original _id is kept (update pipeline: $replaceWith)', async () => {
      const res = await c.updateOne({ _id: 1 }, [{ $replaceWith: { z: { $add: ['$a', '$b'] } } }]);
      expect(res.modifiedCount).toBe(1);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, z: 3 });
    });

    it('when the new root has a different _id, then the update is refused with ImmutableField 66', async () => {
      const err = await serverError(c.updateOne({ _id: 1 }, [{ $replaceWith: { _id: 2 } }]));
      expect(err.code).toBe(66);
    });

    it('when the pipeline holds a stage not allowed in updates, then it is refused with InvalidOptions 72 ("$match is not allowed to be used within an update")', async () => {
      const err = await serverError(c.updateOne({ _id: 1 }, [{ $match: { a: 1 } }]));
      expect(err.code).toBe(72);
      expect(err.message).toContain('$match');
    });

    it('when let defines an expression, then the pipeline sees its value and the literal is never stored (update: let)', async () => {
      await c.updateOne({ _id: 1 }, [{ $set: { c: '$$total' } }], {
        let: { total: { $add: [40, 2] } },
      });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 1, b: 2, c: 42 });
    });

    it('when an upsert runs a pipeline, then the query equality fields seed the new document (update pipeline: upsert)', async () => {
      await c.updateOne({ _id: 7 }, [{ $set: { made: { $literal: 'yes' } } }], { upsert: true });
      expect(await c.findOne({ _id: 7 })).toEqual({ _id: 7, made: 'yes' });
    });
  });

  describe('delete', () => {
    beforeEach(async () => {
      await c.insertMany([
        { _id: 1, k: 1 },
        { _id: 2, k: 1 },
        { _id: 3, k: 2 },
      ]);
    });

    it('when limit is 1, then one matching document is deleted; with limit 0, all (delete: limit)', async () => {
      expect((await c.deleteOne({ k: 1 })).deletedCount).toBe(1);
      expect((await c.deleteMany({})).deletedCount).toBe(2);
    });

    it('when let is given, then the filter sees the variable (delete: let)', async () => {
      await c.deleteMany({ $expr: { $eq: ['$k', '$$k'] } }, { let: { k: 2 } });
      expect((await c.find().toArray()).map((d) => d._id)).toEqual([1, 2]);
    });

    it('when a statement has a limit other than 0 or 1, then the command fails (delete: limit "0 or 1")', async () => {
      const err = await serverError(h.db.command({ delete: 'c', deletes: [{ q: {}, limit: 2 }] }));
      expect(err.code).toBe(9);
    });
  });

  describe('findAndModify', () => {
    beforeEach(async () => {
      await c.insertMany([
        { _id: 1, n: 1 },
        { _id: 2, n: 2 },
      ]);
    });

    it('when new is not set, then the document before the update is returned (findAndModify: new default false)', async () => {
      const r = await h.db.command({
        findAndModify: 'c',
        query: { _id: 1 },
        update: { $inc: { n: 1 } },
      });
      expect(r['value']).toEqual({ _id: 1, n: 1 });
      expect(r['lastErrorObject']).toEqual({ n: 1, updatedExisting: true });
    });

    it('when an upsert inserts with new true, then the new document and lastErrorObject.upserted come back (findAndModify: lastErrorObject)', async () => {
      const r = await h.db.command({
        findAndModify: 'c',
        query: { _id: 9 },
        update: { $set: { n: 9 } },
        upsert: true,
        new: true,
      });
      expect(r['value']).toEqual({ _id: 9, n: 9 });
      expect(r['lastErrorObject']).toEqual({ n: 1, updatedExisting: false, upserted: 9 });
    });

    it('when remove is set with a sort, then the first document in that order is removed and returned (findAndModify: remove, sort)', async () => {
      const r = await h.db.command({
        findAndModify: 'c',
        query: {},
        sort: { n: -1 },
        remove: true,
      });
      expect(r['value']).toEqual({ _id: 2, n: 2 });
      expect(await c.countDocuments()).toBe(1);
    });

    it('when nothing matches and upsert is not set, then value is null (findAndModify: output)', async () => {
      const r = await h.db.command({
        findAndModify: 'c',
        query: { _id: 5 },
        update: { $set: { n: 5 } },
      });
      expect(r['value']).toBeNull();
      expect(r['lastErrorObject']).toEqual({ n: 0, updatedExisting: false });
    });

    it('when the update is a pipeline using let, then the variable is evaluated (findAndModify: let)', async () => {
      const r = await h.db.command({
        findAndModify: 'c',
        query: { _id: 1 },
        update: [{ $set: { m: '$$m' } }],
        let: { m: { $concat: ['a', 'b'] } },
        new: true,
      });
      expect(r['value']).toEqual({ _id: 1, n: 1, m: 'ab' });
    });
  });

  describe('bulk writes', () => {
    it('when a bulkWrite mixes operations, then the counts of each kind are reported (bulkWrite: BulkWriteResult)', async () => {
      await c.insertOne({ _id: 1, n: 1 });
      const res = await c.bulkWrite([
        { insertOne: { document: { _id: 2, n: 2 } } },
        { updateOne: { filter: { _id: 1 }, update: { $set: { n: 10 } } } },
        { updateOne: { filter: { _id: 3 }, update: { $set: { n: 3 } }, upsert: true } },
        { replaceOne: { filter: { _id: 2 }, replacement: { n: 20 } } },
        { deleteOne: { filter: { _id: 1 } } },
      ]);
      expect(res).toMatchObject({
        insertedCount: 1,
        matchedCount: 2,
        modifiedCount: 2,
        upsertedCount: 1,
        deletedCount: 1,
      });
      expect(await c.find().sort({ _id: 1 }).toArray()).toEqual([
        { _id: 2, n: 20 },
        { _id: 3, n: 3 },
      ]);
    });

    it('when an ordered bulkWrite fails at an operation, then later operations do not run and the error carries its index (bulkWrite: ordered)', async () => {
      await c.insertOne({ _id: 1 });
      const err = (await c
        .bulkWrite([
          { insertOne: { document: { _id: 2 } } },
          { insertOne: { document: { _id: 1 } } },
          { insertOne: { document: { _id: 3 } } },
        ])
        .catch((e: unknown) => e)) as MongoBulkWriteError;
      expect(err.writeErrors).toMatchObject([{ index: 1, code: 11000 }]);
      expect((await c.find().toArray()).map((d) => d._id)).toEqual([1, 2]);
    });

    it('when an unordered bulkWrite fails at an operation, then the others still run (bulkWrite: ordered false)', async () => {
      await c.insertOne({ _id: 1 });
      await c
        .bulkWrite(
          [
            { insertOne: { document: { _id: 1 } } },
            { updateOne: { filter: { _id: 1 }, update: { $set: { v: 1 } } } },
          ],
          { ordered: false },
        )
        .catch(() => undefined);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, v: 1 });
    });
  });

  describe('aggregate', () => {
    beforeEach(async () => {
      await c.insertMany([
        { _id: 1, g: 'x', v: 1, arr: [1, 2] },
        { _id: 2, g: 'x', v: 2, arr: [] },
        { _id: 3, g: 'y', v: 5 },
      ]);
      await h.db
        .collection<{ _id: string; label: string }>('other')
        .insertMany([{ _id: 'x', label: 'ex' }]);
    });

    it('when $group sums by key and $sort orders the groups, then one document per key comes back ($group, $sort)', async () => {
      const out = await c
        .aggregate([{ $group: { _id: '$g', total: { $sum: '$v' } } }, { $sort: { _id: 1 } }])
        .toArray();
      expect(out).toEqual([
        { _id: 'x', total: 3 },
        { _id: 'y', total: 5 },
      ]);
    });

    it('when $unwind meets an empty or missing array, then that document is dropped ($unwind: preserveNullAndEmptyArrays default false)', async () => {
      const out = await c
        .aggregate([{ $unwind: '$arr' }, { $project: { _id: 1, arr: 1 } }])
        .toArray();
      expect(out).toEqual([
        { _id: 1, arr: 1 },
        { _id: 1, arr: 2 },
      ]);
    });

    it('when $lookup joins another collection, then matches come as an array ($lookup: equality match)', async () => {
      const out = await c
        .aggregate([
          { $match: { _id: 1 } },
          { $lookup: { from: 'other', localField: 'g', foreignField: '_id', as: 'j' } },
          { $project: { j: 1 } },
        ])
        .toArray();
      expect(out).toEqual([{ _id: 1, j: [{ _id: 'x', label: 'ex' }] }]);
    });

    it('when $match, $skip, $limit and $count follow each other, then $count gives the number that passed ($count)', async () => {
      const out = await c
        .aggregate([{ $match: { v: { $gte: 1 } } }, { $skip: 1 }, { $limit: 5 }, { $count: 'n' }])
        .toArray();
      expect(out).toEqual([{ n: 2 }]);
    });

    it('when $facet runs two sub-pipelines, then both results come in one document ($facet)', async () => {
      const out = await c
        .aggregate([
          {
            $facet: {
              small: [{ $match: { v: { $lt: 2 } } }, { $count: 'n' }],
              all: [{ $count: 'n' }],
            },
          },
        ])
        .toArray();
      expect(out).toEqual([{ small: [{ n: 1 }], all: [{ n: 3 }] }]);
    });

    it('when $project includes or computes fields, then _id comes first and included fields keep stored order ($project: "_id field is included by default")', async () => {
      const [inc] = await c
        .aggregate([{ $match: { _id: 1 } }, { $project: { v: 1, g: 1 } }])
        .toArray();
      expect(Object.keys(inc as Document)).toEqual(['_id', 'g', 'v']);
      const [computed] = await c
        .aggregate([{ $match: { _id: 1 } }, { $project: { double: { $multiply: ['$v', 2] } } }])
        .toArray();
      expect(computed).toEqual({ _id: 1, double: 2 });
      expect(Object.keys(computed as Document)).toEqual(['_id', 'double']);
      const [faceted] = await c
        .aggregate([{ $match: { _id: 1 } }, { $facet: { f: [{ $project: { v: 1 } }] } }])
        .toArray();
      expect(Object.keys((faceted as { f: Document[] }).f[0] as Document)).toEqual(['_id', 'v']);
    });

    it('when a pipeline uses $out, then it is refused by name rather than ignored (stage not implemented by this server)', async () => {
      const err = await serverError(c.aggregate([{ $out: 'copy' }]).toArray());
      expect(err.code).toBe(40324);
      expect(err.message).toContain('$out');
    });

    it('when aggregate has let and the first stage is a $match on it, then the variable is defined (aggregate: let)', async () => {
      const out = await c
        .aggregate([{ $match: { $expr: { $eq: ['$v', '$$v'] } } }], { let: { v: 5 } })
        .toArray();
      expect(out.map((d) => d._id)).toEqual([3]);
    });
  });

  describe('indexes', () => {
    it('when createIndex is asked twice for the same index, then the second is a no-op (createIndexes: "already exists ... no-op")', async () => {
      expect(await c.createIndex({ a: 1 })).toBe('a_1');
      const r = await h.db.command({
        createIndexes: 'c',
        indexes: [{ key: { a: 1 }, name: 'a_1' }],
      });
      expect(r).toMatchObject({
        numIndexesBefore: 2,
        numIndexesAfter: 2,
        note: 'all indexes already exist',
      });
    });

    it('when an index name is reused for another key, then IndexKeySpecsConflict 86', async () => {
      await c.createIndex({ a: 1 }, { name: 'i' });
      expect((await serverError(c.createIndex({ b: 1 }, { name: 'i' }))).code).toBe(86);
    });

    it('when the same key is asked with other options, then IndexOptionsConflict 85', async () => {
      await c.createIndex({ a: 1 });
      expect((await serverError(c.createIndex({ a: 1 }, { unique: true, name: 'a_u' }))).code).toBe(
        85,
      );
    });

    it('when a unique index is built over duplicates, then it fails with 11000 and is not created (index-unique: "unable to create")', async () => {
      await c.insertMany([{ a: 1 }, { a: 1 }]);
      expect((await serverError(c.createIndex({ a: 1 }, { unique: true }))).code).toBe(11000);
      expect((await c.listIndexes().toArray()).map((i) => i['name'])).toEqual(['_id_']);
    });

    it('when a unique index exists, then a duplicate insert fails with keyPattern and keyValue (index-unique)', async () => {
      await c.createIndex({ a: 1 }, { unique: true });
      await c.insertOne({ a: 1 });
      const err = await serverError(c.insertOne({ a: 1 }));
      expect(err.code).toBe(11000);
      expect(err['keyPattern']).toEqual({ a: 1 });
      expect(err['keyValue']).toEqual({ a: 1 });
    });

    it('when dropping _id_ or a missing index, then InvalidOptions 72 and IndexNotFound 27 (dropIndexes)', async () => {
      await c.insertOne({});
      expect((await serverError(c.dropIndex('_id_'))).code).toBe(72);
      expect((await serverError(c.dropIndex('nope'))).code).toBe(27);
    });

    it('when listing indexes of a missing collection, then NamespaceNotFound 26 (listIndexes)', async () => {
      expect((await serverError(h.db.collection('none').listIndexes().toArray())).code).toBe(26);
    });
  });

  describe('cursors', () => {
    beforeEach(async () => {
      await c.insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: i })));
    });

    it('when find has batchSize 2, then getMore returns the rest and a zero id at the end (getMore)', async () => {
      const first = await h.db.command({ find: 'c', batchSize: 2 });
      const id = cursorId(first);
      expect((first['cursor'] as Document)['firstBatch']).toHaveLength(2);
      const more = await h.db.command({ getMore: id, collection: 'c' });
      expect((more['cursor'] as Document)['nextBatch']).toHaveLength(3);
      expect(Long.fromValue((more['cursor'] as Document)['id'] as Long).isZero()).toBe(true);
    });

    it('when a cursor is killed, then getMore on it fails with CursorNotFound 43 (killCursors)', async () => {
      const id = cursorId(await h.db.command({ find: 'c', batchSize: 1 }));
      const killed = await h.db.command({ killCursors: 'c', cursors: [id] });
      expect(killed['cursorsKilled']).toEqual([id]);
      expect((await serverError(h.db.command({ getMore: id, collection: 'c' }))).code).toBe(43);
    });

    it('when a negative limit is given, then one batch comes back and the cursor is closed (find: limit, singleBatch)', async () => {
      const r = await h.db.command({ find: 'c', limit: -2 });
      expect((r['cursor'] as Document)['firstBatch']).toHaveLength(2);
      expect(cursorId(r).isZero()).toBe(true);
    });
  });
});
