// Cursors through the official driver. Expected behaviour from the MongoDB manual:
// - "Iterate a Cursor" / batch sizes ("find() and aggregate() operations have an initial batch size of
//   101 documents by default"): https://www.mongodb.com/docs/manual/tutorial/iterate-a-cursor/
// - "getMore": https://www.mongodb.com/docs/manual/reference/command/getMore/
// - "killCursors": https://www.mongodb.com/docs/manual/reference/command/killCursors/
import type { Document } from 'mongodb';
import { Long } from 'mongodb';
import { cursorId, serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('cursors', () => {
  let h: DriverHarness;
  const commands: Document[] = [];
  beforeEach(async () => {
    h = await startWithDriver();
    commands.length = 0;
    await h.db.collection('many').insertMany(Array.from({ length: 250 }, (_, i) => ({ i })));
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when 250 documents are read without batchSize, then the first batch holds 101 and getMore returns the rest', async () => {
    const res = await h.db.command({ find: 'many', filter: {}, sort: { i: 1 } });
    expect(res['cursor'].firstBatch).toHaveLength(101);
    expect(String(res['cursor'].id) === '0').toBe(false);
    const more = await h.db.command({ getMore: cursorId(res), collection: 'many' });
    expect(more['cursor'].nextBatch).toHaveLength(149);
    expect(more['cursor'].nextBatch[0].i).toBe(101);
    expect(String(more['cursor'].id) === '0').toBe(true);
  });

  it('when a cursor is iterated with batchSize 50, then all 250 documents arrive in order over several getMores', async () => {
    const docs = await h.db.collection('many').find({}, { batchSize: 50 }).sort({ i: 1 }).toArray();
    expect(docs.map((d) => d['i'])).toEqual(Array.from({ length: 250 }, (_, i) => i));
    const first = await h.db.command({ find: 'many', batchSize: 50 });
    expect(first['cursor'].firstBatch).toHaveLength(50);
    const second = await h.db.command({
      getMore: cursorId(first),
      collection: 'many',
      batchSize: 50,
    });
    expect(second['cursor'].nextBatch).toHaveLength(50);
    expect(second['cursor'].id.toString()).toBe(first['cursor'].id.toString());
  });

  it('when an aggregation returns more than a batch, then its cursor pages too', async () => {
    const docs = await h.db
      .collection('many')
      .aggregate([{ $match: { i: { $gte: 10 } } }], { batchSize: 20 })
      .toArray();
    expect(docs).toHaveLength(240);
  });

  it('when a cursor is killed, then killCursors reports it and getMore says CursorNotFound (43)', async () => {
    const res = await h.db.command({ find: 'many', batchSize: 10 });
    const id = cursorId(res);
    const killed = await h.db.command({
      killCursors: 'many',
      cursors: [id, Long.fromNumber(12345)],
    });
    expect(killed['cursorsKilled'].map(String)).toEqual([id.toString()]);
    expect(killed['cursorsNotFound'].map(String)).toEqual(['12345']);
    const err = await serverError(h.db.command({ getMore: id, collection: 'many' }));
    expect(err.code).toBe(43);
  });

  it('when the driver closes a cursor early, then the server cursor is gone', async () => {
    const cursor = h.db.collection('many').find({}, { batchSize: 10 });
    await cursor.next();
    const id = cursor.id as Long;
    await cursor.close();
    expect((await serverError(h.db.command({ getMore: id, collection: 'many' }))).code).toBe(43);
  });

  it('when singleBatch or a negative limit is used, then no cursor stays open', async () => {
    const res = await h.db.command({ find: 'many', batchSize: 5, singleBatch: true });
    expect(res['cursor'].firstBatch).toHaveLength(5);
    expect(String(res['cursor'].id) === '0').toBe(true);
    const neg = await h.db.command({ find: 'many', limit: -3 });
    expect(neg['cursor'].firstBatch).toHaveLength(3);
    expect(String(neg['cursor'].id) === '0').toBe(true);
  });

  it('when batchSize is 0 on find, then the first batch is empty and the cursor stays open', async () => {
    const res = await h.db.command({ find: 'many', batchSize: 0 });
    expect(res['cursor'].firstBatch).toHaveLength(0);
    const more = await h.db.command({ getMore: cursorId(res), collection: 'many' });
    expect(more['cursor'].nextBatch).toHaveLength(250);
  });

  it('when getMore names another collection, then it is refused', async () => {
    const res = await h.db.command({ find: 'many', batchSize: 5 });
    const err = await serverError(h.db.command({ getMore: cursorId(res), collection: 'other' }));
    expect(err.code).toBe(13);
  });
});
