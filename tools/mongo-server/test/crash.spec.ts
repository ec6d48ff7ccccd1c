// The server as its own process, killed with SIGKILL: in the middle of a burst of writes with
// j: true, and at each point of compaction. Whatever was acknowledged is there after a restart,
// exactly; what was not may be there or not, but never half. MongoDB: "Write Concern" j
// (https://www.mongodb.com/docs/manual/reference/write-concern/#j-option): acknowledged once
// written to the on-disk journal.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient, type Document } from 'mongodb';
import { startServerProcess, type ServerProcess } from '../src/index';
import { dump } from './helpers';

const J = { writeConcern: { j: true } };

/** createIndexes with j: true (the driver's createIndex does not take a write concern). */
async function createIndexJ(
  client: MongoClient,
  index: Document,
  collection = 'burst',
): Promise<void> {
  await client
    .db('app')
    .command({ createIndexes: collection, indexes: [index], writeConcern: { j: true } });
}

/** One writer's view of its documents: what was acknowledged, and the write it had in flight. */
interface Lane {
  acked: Map<string, Document | null>;
  ackedIndexes: Set<string>;
  inflight?: { ids: string[]; before: Array<Document | null>; after: Array<Document | null> };
  inflightIndex?: string;
  ops: number;
}

describe('crash recovery (a real process killed with SIGKILL)', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mongo-crash-'));
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = (uri: string): Promise<MongoClient> =>
    new MongoClient(uri, {
      retryWrites: false,
      serverSelectionTimeoutMS: 2000,
      maxPoolSize: 32,
    }).connect();

  it('when killed during a burst of j: true inserts, updates, deletes and index builds, then every acknowledged write is back exactly and nothing is half-applied', async () => {
    server = await startServerProcess({ dataFile: path.join(dir, 'burst.bson') });
    const client = await connect(server.uri);
    const coll = client.db('app').collection('burst');
    const LANES = 16;
    const lanes: Lane[] = Array.from({ length: LANES }, () => ({
      acked: new Map(),
      ackedIndexes: new Set(),
      ops: 0,
    }));
    let acknowledged = 0;
    let killing = false;
    const runLane = async (k: number): Promise<void> => {
      const lane = lanes[k] as Lane;
      const live: string[] = [];
      for (let n = 0; !killing; n++) {
        const payload = randomBytes(8 + (n % 50)).toString('hex');
        const step = n % 10;
        try {
          if (step === 9) {
            const name = `lane${k}_${n}`;
            lane.inflightIndex = name;
            await createIndexJ(client, { key: { [`f${k}_${n}`]: 1 }, name });
            lane.ackedIndexes.add(name);
            lane.inflightIndex = undefined;
          } else if (step === 4 && live.length > 0) {
            const id = live.shift() as string;
            lane.inflight = { ids: [id], before: [lane.acked.get(id) ?? null], after: [null] };
            await coll.deleteOne({ _id: id } as never, J);
            lane.acked.set(id, null);
          } else if (step % 3 === 0 || live.length === 0) {
            // An ordered batch of three: after a crash a prefix of it may be there, never a gap.
            const docs = [0, 1, 2].map((i) => ({ _id: `${k}-${n}-${i}`, lane: k, n, payload }));
            lane.inflight = {
              ids: docs.map((d) => d._id),
              before: [null, null, null],
              after: docs,
            };
            await coll.insertMany(docs as never[], J);
            for (const d of docs) {
              lane.acked.set(d._id, d);
              live.push(d._id);
            }
          } else {
            const id = live[n % live.length] as string;
            const before = lane.acked.get(id) as Document;
            const after = { ...before, n, payload };
            lane.inflight = { ids: [id], before: [before], after: [after] };
            await coll.updateOne({ _id: id } as never, { $set: { n, payload } }, J);
            lane.acked.set(id, after);
          }
          lane.inflight = undefined;
          lane.ops++;
          acknowledged++;
        } catch {
          return; // the server is gone; what was in flight stays in `inflight`
        }
      }
    };
    const running = lanes.map((_l, k) => runLane(k));
    while (acknowledged < 400) await new Promise((r) => setTimeout(r, 5));
    killing = true;
    const killed = await server.kill('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    await Promise.all(running);
    await client.close(true);

    await server.restart();
    const after = await connect(server.uri);
    try {
      const stored = new Map<string, Document>();
      for (const d of await after.db('app').collection('burst').find().toArray())
        stored.set(String(d['_id']), d);
      const indexes = new Set(
        (await after.db('app').collection('burst').listIndexes().toArray()).map((i) =>
          String(i['name']),
        ),
      );
      const accounted = new Set<string>(['_id_']);
      let checked = 0;
      for (const lane of lanes) {
        const inflight = new Set(lane.inflight?.ids ?? []);
        for (const [id, doc] of lane.acked) {
          if (inflight.has(id)) continue;
          expect(stored.get(id) ?? null).toEqual(doc);
          accounted.add(id);
          checked++;
        }
        if (lane.inflight) {
          const { ids, before, after: wanted } = lane.inflight;
          const states = ids.map((id) => stored.get(id) ?? null);
          ids.forEach((id) => accounted.add(id));
          // Each document is whole, before or after; a batch lands as a prefix.
          const applied = states.map((s, i) => {
            if (JSON.stringify(s) === JSON.stringify(wanted[i])) return true;
            expect(s).toEqual(before[i]);
            return false;
          });
          const firstMissing = applied.indexOf(false);
          if (firstMissing >= 0) expect(applied.slice(firstMissing)).not.toContain(true);
        }
        for (const name of lane.ackedIndexes) {
          expect(indexes.has(name)).toBe(true);
          accounted.add(name);
        }
        if (lane.inflightIndex) accounted.add(lane.inflightIndex);
      }
      // Nothing that no writer wrote.
      for (const id of stored.keys()) expect(accounted.has(id)).toBe(true);
      for (const name of indexes) expect(accounted.has(name)).toBe(true);
      expect(checked).toBeGreaterThan(100);
    } finally {
      await after.close();
    }
  }, 60_000);

  it.each(['writing', 'written', 'renamed'] as const)(
    'when killed during compaction (%s), then a restart recovers exactly the acknowledged state, and leaves no stale file',
    async (point) => {
      const file = path.join(dir, 'compact.bson');
      server = await startServerProcess({
        dataFile: file,
        args: ['--compact-min-bytes', '200000'],
        env: { MONGO_SERVER_TEST_PAUSE_COMPACTION: point },
      });
      const client = await connect(server.uri);
      const coll = client.db('app').collection('docs');
      await createIndexJ(client, { key: { n: 1 }, name: 'n_1' }, 'docs');
      // ~450 KB of documents: the journal passes 200 KB, compaction starts and stops at `point`.
      for (let i = 0; i < 1500; i += 100) {
        const docs = Array.from({ length: 100 }, (_x, j) => ({
          _id: i + j,
          n: i + j,
          text: 'x'.repeat(250),
        }));
        await coll.insertMany(docs as never[], J);
      }
      await server.waitForLog('compaction paused (test hook)');
      // Writes go on meanwhile, into the segment after the rotation point.
      await coll.updateMany({ n: { $lt: 100 } }, { $set: { updated: true } }, J);
      await coll.deleteMany({ n: { $gte: 1400 } }, J);
      await createIndexJ(client, { key: { updated: 1 }, name: 'updated_1', sparse: true }, 'docs');
      await client
        .db('app')
        .collection('other')
        .insertOne({ _id: 'late' } as never, J);
      const expected = await dump(client);
      await server.kill('SIGKILL');
      await client.close(true);

      await server.restart({ env: {} });
      const again = await connect(server.uri);
      try {
        expect(await dump(again)).toBe(expected);
      } finally {
        await again.close();
      }
      // Temp files and segments the snapshot covers are gone; the kept ones are the live journal.
      const names = readdirSync(dir).sort();
      expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
      if (point === 'renamed')
        expect(names).toEqual(['compact.bson', 'compact.bson.journal.000002']);
      else expect(names).toEqual(['compact.bson.journal.000001', 'compact.bson.journal.000002']);
    },
    60_000,
  );
});
