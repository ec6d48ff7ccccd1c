// Aggregation through the official driver. Expected behaviour from the MongoDB manual:
// - "Aggregation Stages": https://www.mongodb.com/docs/manual/reference/operator/aggregation-pipeline/
//   ($match, $group, $sort, $project, $limit, $skip, $count, $unwind, $addFields/$set, $lookup)
// - "$lookup" (equality match, "from" a collection in the same database; no match gives an empty array):
//   https://www.mongodb.com/docs/manual/reference/operator/aggregation/lookup/
// - "aggregate" command ("cursor" is required): https://www.mongodb.com/docs/manual/reference/command/aggregate/
import { ObjectId } from 'mongodb';
import { serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('aggregate', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
    await h.db.collection('orders').insertMany([
      { _id: 1 as never, customer: 'a', items: ['x', 'y'], total: 10, status: 'paid' },
      { _id: 2 as never, customer: 'b', items: ['x'], total: 20, status: 'paid' },
      { _id: 3 as never, customer: 'a', items: [], total: 5, status: 'open' },
      { _id: 4 as never, customer: 'c', items: ['z'], total: 7, status: 'paid' },
    ]);
    await h.db.collection('customers').insertMany([
      { _id: 'a' as never, name: 'Ann' },
      { _id: 'b' as never, name: 'Bob' },
    ]);
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when $match, $group, $sort and $project run, then totals per customer come out ordered', async () => {
    const out = await h.db
      .collection('orders')
      .aggregate([
        { $match: { status: 'paid' } },
        { $group: { _id: '$customer', sum: { $sum: '$total' }, n: { $sum: 1 } } },
        { $sort: { sum: -1 } },
        { $project: { _id: 0, customer: '$_id', sum: 1, n: 1 } },
      ])
      .toArray();
    expect(out).toEqual([
      { customer: 'b', sum: 20, n: 1 },
      { customer: 'a', sum: 10, n: 1 },
      { customer: 'c', sum: 7, n: 1 },
    ]);
  });

  it('when $unwind, $skip, $limit and $count run, then array elements become documents', async () => {
    const unwound = await h.db
      .collection('orders')
      .aggregate([
        { $unwind: '$items' },
        { $sort: { _id: 1, items: 1 } },
        { $skip: 1 },
        { $limit: 2 },
        { $project: { items: 1 } },
      ])
      .toArray();
    expect(unwound).toEqual([
      { _id: 1, items: 'y' },
      { _id: 2, items: 'x' },
    ]);
    const [count] = await h.db
      .collection('orders')
      .aggregate([{ $unwind: '$items' }, { $count: 'n' }])
      .toArray();
    expect(count).toEqual({ n: 4 });
  });

  it('when $addFields and $set run, then computed fields are added', async () => {
    const out = await h.db
      .collection('orders')
      .aggregate([
        { $match: { _id: 2 } },
        { $addFields: { double: { $multiply: ['$total', 2] } } },
        { $set: { tag: 'x' } },
      ])
      .toArray();
    expect(out[0]).toMatchObject({ _id: 2, double: 40, tag: 'x' });
  });

  it('when $lookup joins another collection, then matches are embedded and non-matches get an empty array', async () => {
    const out = await h.db
      .collection('orders')
      .aggregate([
        { $lookup: { from: 'customers', localField: 'customer', foreignField: '_id', as: 'who' } },
        { $sort: { _id: 1 } },
        { $project: { who: 1 } },
      ])
      .toArray();
    expect(out.map((d) => d['who'])).toEqual([
      [{ _id: 'a', name: 'Ann' }],
      [{ _id: 'b', name: 'Bob' }],
      [{ _id: 'a', name: 'Ann' }],
      [],
    ]);
  });

  it('when $lookup uses ObjectId keys, then they are matched by value', async () => {
    const id = new ObjectId();
    await h.db.collection('parents').insertOne({ _id: id, n: 'p' });
    await h.db.collection('kids').insertOne({ parent: new ObjectId(id.toHexString()) });
    const [kid] = await h.db
      .collection('kids')
      .aggregate([
        { $lookup: { from: 'parents', localField: 'parent', foreignField: '_id', as: 'p' } },
      ])
      .toArray();
    expect(kid?.['p']).toEqual([{ _id: id, n: 'p' }]);
  });

  it('when a stage is unknown, then the command fails with 40324', async () => {
    const err = await serverError(
      h.db
        .collection('orders')
        .aggregate([{ $frobnicate: {} }])
        .toArray(),
    );
    expect(err.code).toBe(40324);
  });

  it('when an expression operator is unknown, then the command fails with InvalidPipelineOperator (168)', async () => {
    const err = await serverError(
      h.db
        .collection('orders')
        .aggregate([{ $project: { x: { $frobnicate: 1 } } }])
        .toArray(),
    );
    expect(err.code).toBe(168);
  });

  it('when $out is used, then it is refused rather than ignored', async () => {
    const err = await serverError(
      h.db
        .collection('orders')
        .aggregate([{ $out: 'copy' }])
        .toArray(),
    );
    expect(err.code).toBe(40324);
  });

  it('when aggregate is sent without a cursor option, then it fails with FailedToParse (9)', async () => {
    const err = await serverError(h.db.command({ aggregate: 'orders', pipeline: [] }));
    expect(err.code).toBe(9);
  });
});
