// Benchmark of the project's MongoDB-compatible server (tools/mongo-server), through the official
// driver over loopback: inserts per second (insertMany batches and single inserts), and find by a
// unique key at 1k documents versus 100k documents. The 100k/1k latency ratio shows whether the
// equality index is used (target: within 3x); a full scan would make it ~100x.
// Run: npx tsx tools/bench/src/mongo-server.ts
import { MongoClient, type Collection } from 'mongodb';
import pino from 'pino';
import { start } from '@nhp/mongo-server';

const TARGET_RATIO = 3;
const LOOKUPS = 3000;

const now = (): number => Number(process.hrtime.bigint()) / 1e6;

async function fill(coll: Collection, count: number, batch = 1000): Promise<number> {
  const t0 = now();
  for (let from = 0; from < count; from += batch) {
    const docs = [];
    for (let i = from; i < Math.min(count, from + batch); i++)
      docs.push({ key: `k${i}`, n: i, payload: 'x'.repeat(64) });
    await coll.insertMany(docs, { ordered: false });
  }
  return now() - t0;
}

async function lookupLatencyMs(coll: Collection, count: number): Promise<number> {
  // Warm up the connection and the code paths first.
  for (let i = 0; i < 200; i++) await coll.findOne({ key: `k${(i * 7919) % count}` });
  const t0 = now();
  for (let i = 0; i < LOOKUPS; i++) {
    const doc = await coll.findOne({ key: `k${(i * 104729) % count}` });
    if (!doc) throw new Error('lookup missed');
  }
  return (now() - t0) / LOOKUPS;
}

export async function run(): Promise<void> {
  const server = await start({ port: 0, logger: pino({ level: 'silent' }) });
  const client = new MongoClient(server.uri);
  try {
    await client.connect();
    const db = client.db('bench');

    const batched = db.collection('batched');
    const batchedMs = await fill(batched, 20_000);
    const singles = db.collection('singles');
    const t0 = now();
    for (let i = 0; i < 2000; i++) await singles.insertOne({ key: `s${i}`, n: i });
    const singleMs = now() - t0;

    const small = db.collection('small');
    await small.createIndex({ key: 1 }, { unique: true });
    await fill(small, 1_000);
    const large = db.collection('large');
    await large.createIndex({ key: 1 }, { unique: true });
    const largeFillMs = await fill(large, 100_000);

    const smallMs = await lookupLatencyMs(small, 1_000);
    const largeMs = await lookupLatencyMs(large, 100_000);
    const byIdMs = await (async () => {
      const ids = (
        await large
          .find({}, { projection: { _id: 1 } })
          .limit(LOOKUPS)
          .toArray()
      ).map((d) => d._id);
      const s = now();
      for (const id of ids) await large.findOne({ _id: id });
      return (now() - s) / ids.length;
    })();
    const ratio = largeMs / smallMs;

    const lines = [
      'mongo-server benchmark (official driver over loopback)',
      `  insertMany, batches of 1000 : ${Math.round(20_000 / (batchedMs / 1000))} docs/s (20k docs in ${batchedMs.toFixed(0)} ms)`,
      `  insertMany into unique index: ${Math.round(100_000 / (largeFillMs / 1000))} docs/s (100k docs in ${largeFillMs.toFixed(0)} ms)`,
      `  insertOne, one at a time    : ${Math.round(2000 / (singleMs / 1000))} docs/s`,
      `  findOne by unique key @ 1k  : ${(smallMs * 1000).toFixed(0)} µs`,
      `  findOne by unique key @ 100k: ${(largeMs * 1000).toFixed(0)} µs`,
      `  findOne by _id @ 100k       : ${(byIdMs * 1000).toFixed(0)} µs`,
      `  ratio 100k / 1k             : ${ratio.toFixed(2)}x (target: within ${TARGET_RATIO}x) -> ${ratio <= TARGET_RATIO ? 'OK' : 'OVER TARGET'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await client.close();
    await server.stop();
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
