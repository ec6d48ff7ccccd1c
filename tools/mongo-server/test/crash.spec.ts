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
        args: ['--journal-max-bytes', '200000'],
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

  it('when killed at random moments while compactions run one after another under j: true writes, then every acknowledged write is back each time', async () => {
    const file = path.join(dir, 'churn.bson');
    // A journal of at most ~100 KB beside ~10 MB of data: with ~1 KB documents a compaction
    // starts every ~100 writes and takes a while to write its snapshot. Each kill comes a random
    // time after a compaction started (up to 1.5 times as long as the last one took), so it lands
    // while one writes its snapshot, renames it or removes segments, or just after.
    server = await startServerProcess({ dataFile: file, args: ['--journal-max-bytes', '100000'] });
    const pad = 'p'.repeat(1000);
    const seed = await connect(server.uri);
    for (let i = 0; i < 10_000; i += 1000) {
      const docs = Array.from({ length: 1000 }, (_x, j) => ({ _id: `seed-${i + j}`, v: 0, pad }));
      await seed
        .db('app')
        .collection('churn')
        .insertMany(docs as never[], J);
    }
    await seed.close();
    const acked = new Map<string, number>(
      Array.from({ length: 10_000 }, (_x, i) => [`seed-${i}`, 0]),
    );
    const inflight = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      const client = await connect(server.uri);
      const coll = client.db('app').collection<{ _id: string; v: number; pad: string }>('churn');
      let stop = false;
      const lane = async (l: number) => {
        for (let i = 0; !stop; i++) {
          // Alternately a new document and an increment of one written before.
          const id = i % 2 === 0 ? `r${round}-l${l}-${i}` : `r${round}-l${l}-${i - 1}`;
          const next = (acked.get(id) ?? -1) + 1;
          inflight.set(id, next);
          try {
            if (next === 0) await coll.insertOne({ _id: id, v: 0, pad }, J);
            else await coll.updateOne({ _id: id }, { $inc: { v: 1 } }, J);
          } catch {
            return; // the kill: this write's fate is unknown (kept in `inflight`)
          }
          acked.set(id, next);
          inflight.delete(id);
        }
      };
      const lanes = Array.from({ length: 8 }, (_x, l) => lane(l));
      const lines = (msg: string) => server?.lines.filter((line) => line['msg'] === msg) ?? [];
      const want = 2 + Math.floor(Math.random() * 3);
      while (lines('compaction started').length < want) await new Promise((r) => setTimeout(r, 1));
      const took = Number(lines('compaction wrote a new snapshot').at(-1)?.['ms'] ?? 10);
      await new Promise((r) => setTimeout(r, Math.random() * took * 1.5));
      await server.kill('SIGKILL');
      stop = true;
      await Promise.all(lanes);
      await client.close(true);
      await server.restart();

      const again = await connect(server.uri);
      try {
        const stored = new Map(
          (
            await again.db('app').collection<{ _id: string; v: number }>('churn').find().toArray()
          ).map((d) => [d._id, d.v]),
        );
        for (const [id, v] of acked) {
          const possible = inflight.has(id) ? [v, inflight.get(id)] : [v];
          expect({ id, v: possible.includes(stored.get(id)) ? 'acked' : stored.get(id) }).toEqual({
            id,
            v: 'acked',
          });
        }
        // What the kill cut short is there whole or not at all; learn which for the next round.
        for (const [id, v] of inflight) {
          if (stored.get(id) === v) acked.set(id, v);
          else expect(stored.get(id)).toBe(acked.get(id));
        }
        inflight.clear();
        expect(stored.size).toBe(acked.size);
      } finally {
        await again.close();
      }
    }
    expect(acked.size).toBeGreaterThan(100);
  }, 120_000);
});
