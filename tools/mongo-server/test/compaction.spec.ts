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
        compactMinBytes: Number.MAX_SAFE_INTEGER, // only when asked
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

  it('when the journal outgrows the snapshot (and the minimum), then compaction runs on its own and keeps only the live segment', async () => {
    const first = await open({ journal: { compactMinBytes: 100_000 } });
    const docs = first.client.db('app').collection('docs');
    // Inserts and updates of the same documents: the journal grows, the data set does not.
    await docs.insertMany(
      Array.from({ length: 200 }, (_x, i) => ({ _id: i, text: 'x'.repeat(200), v: 0 })) as never[],
      J,
    );
    let v = 0;
    while ((first.server.persistence?.stats().compactions ?? 0) < 2) {
      v++;
      await docs.updateMany({}, { $set: { v } }, J);
    }
    // Settle: wait for a running compaction, then one of everything so far (the journal is then
    // too small to start another).
    await first.server.persistence?.compact();
    await first.server.persistence?.compact();
    await docs.updateOne({ _id: 0 } as never, { $set: { last: true } }, J);
    const stats = first.server.persistence?.stats();
    // Each compaction waits until the journal exceeds both the minimum and the snapshot.
    expect(stats?.snapshotBytes).toBeGreaterThan(200 * 200);
    expect(statSync(file).size).toBe(stats?.snapshotBytes);
    const names = readdirSync(dir);
    expect(names.filter((n) => n.includes('.journal.'))).toHaveLength(1);
    const expected = await dump(first.client);
    await close(first);
    const second = await open();
    expect(await dump(second.client)).toBe(expected);
  });
});
