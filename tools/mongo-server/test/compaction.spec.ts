// Compaction: a new snapshot written in the background from the state at a rotation point, while
// writes go on into the next journal segment; the segments it covers are removed afterwards.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { start, type CompactionPoint, type RunningMongoServer } from '../src/index';
import { dump } from './helpers';

const J = { writeConcern: { j: true } };

describe('compaction', () => {
  let dir: string;
  let file: string;
  const opened: Array<{ server: RunningMongoServer; client: MongoClient }> = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mongo-compaction-'));
    file = path.join(dir, 'data.bson');
  });
  afterEach(async () => {
    for (const o of opened.splice(0)) {
      await o.client.close();
      await o.server.stop();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(
    options: Partial<Parameters<typeof start>[0]> = {},
  ): Promise<{ server: RunningMongoServer; client: MongoClient }> {
    const server = await start({ port: 0, dataFile: file, ...options });
    const client = await new MongoClient(server.uri).connect();
    const o = { server, client };
    opened.push(o);
    return o;
  }

  async function close(o: { server: RunningMongoServer; client: MongoClient }): Promise<void> {
    opened.splice(opened.indexOf(o), 1);
    await o.client.close();
    await o.server.stop();
  }

  it('when writes go on while compaction writes the snapshot, then the data stays identical, and a restart from the new snapshot and journal gives it back', async () => {
    // Compaction stops after its first chunk until the test lets it go on.
    let paused!: () => void;
    const reached = new Promise<void>((r) => (paused = r));
    let resume!: () => void;
    const resumed = new Promise<void>((r) => (resume = r));
    const first = await open({
      journal: {
        maxBytes: Number.MAX_SAFE_INTEGER, // only when asked
        pauseCompaction: async (point: CompactionPoint) => {
          if (point !== 'writing') return;
          paused();
          await resumed;
        },
      },
    });
    const db = first.client.db('app');
    const docs = db.collection('docs');
    await docs.createIndex({ n: 1 }, { unique: true });
    for (let i = 0; i < 3000; i += 500) {
      await docs.insertMany(
        Array.from({ length: 500 }, (_x, j) => ({
          _id: i + j,
          n: i + j,
          text: `doc ${i + j}`,
        })) as never[],
        J,
      );
    }
    await db.collection('dropped-later').insertOne({ a: 1 }, J);
    const compaction = first.server.persistence?.compact();
    await reached;
    // Meanwhile: updates of captured documents, deletes, inserts, DDL.
    await docs.updateMany({ n: { $lt: 1000 } }, { $set: { text: 'changed' } }, J);
    await docs.deleteMany({ n: { $gte: 2500 } }, J);
    await docs.insertOne({ _id: 'new', n: -1 } as never, J);
    await docs.createIndex({ text: 1 });
    await db.collection('dropped-later').drop(J);
    await db.collection('created-later').insertOne({ b: 2 }, J);
    const during = await dump(first.client);
    resume();
    await compaction;
    expect(await dump(first.client)).toBe(during);
    expect(first.server.persistence?.stats().compactions).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(['data.bson', 'data.bson.journal.000002']);
    await docs.updateOne({ _id: 'new' } as never, { $set: { after: true } }, J);
    const final = await dump(first.client);
    await close(first);

    const second = await open();
    expect(await dump(second.client)).toBe(final);
  });

  it('when the journal outgrows its maximum, then compaction runs on its own however large the snapshot is, and keeps only the live segment', async () => {
    const first = await open({ journal: { maxBytes: 20_000 } });
    const docs = first.client.db('app').collection('docs');
    // ~200 KB of documents, ten times the journal's maximum: the maximum is absolute, not
    // relative to the snapshot (which once let the journal grow as large as the data).
    await docs.insertMany(
      Array.from({ length: 400 }, (_x, i) => ({ _id: i, text: 'x'.repeat(500), v: 0 })) as never[],
      J,
    );
    // Updates of one document at a time: the journal grows in small steps, the data set does not.
    let v = 0;
    let largest = 0;
    while ((first.server.persistence?.stats().compactions ?? 0) < 3) {
      v++;
      await docs.updateOne({ _id: v % 400 } as never, { $set: { v } }, J);
      // From the first compaction on (the insert alone was a journal of the data's size).
      const stats = first.server.persistence?.stats();
      if (stats?.compactions) largest = Math.max(largest, stats.journalBytes);
    }
    // Settle: wait for a running compaction, then one of everything so far.
    await first.server.persistence?.compact();
    await first.server.persistence?.compact();
    await docs.updateOne({ _id: 0 } as never, { $set: { last: true } }, J);
    const stats = first.server.persistence?.stats();
    expect(stats?.snapshotBytes).toBeGreaterThan(200_000);
    // Past the maximum only by what was written while a compaction ran, far below the snapshot.
    expect(largest).toBeLessThan(100_000);
    expect(statSync(file).size).toBe(stats?.snapshotBytes);
    const names = readdirSync(dir);
    expect(names.filter((n) => n.includes('.journal.'))).toHaveLength(1);
    const expected = await dump(first.client);
    await close(first);
    const second = await open();
    expect(await dump(second.client)).toBe(expected);
  });

  it('when the server stops cleanly, then it leaves a snapshot of everything and no journal, and the next start replays nothing', async () => {
    const first = await open({ journal: { maxBytes: Number.MAX_SAFE_INTEGER } });
    const docs = first.client.db('app').collection('docs');
    await docs.insertMany(Array.from({ length: 100 }, (_x, i) => ({ _id: i, v: i })) as never[], J);
    await docs.updateMany({ v: { $lt: 50 } }, { $set: { low: true } });
    await docs.deleteOne({ _id: 99 } as never);
    const expected = await dump(first.client);
    expect(readdirSync(dir).filter((n) => n.includes('.journal.'))).toHaveLength(1);
    await close(first);
    expect(readdirSync(dir)).toEqual(['data.bson']);

    const second = await open();
    expect(second.server.persistence?.stats()).toMatchObject({ journalBytes: 0 });
    expect(await dump(second.client)).toBe(expected);
  });
});
