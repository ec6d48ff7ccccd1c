// Benchmark of the project's MongoDB-compatible server (tools/mongo-server), through the official
// driver over loopback, against an in-process floor measured in the same run: BSON-serialising and
// -deserialising the same documents, which any wire server and driver must do at least once each.
//
// Measured on 100k refsync-shaped documents of ~800 bytes with refsync's two item indexes:
//   - read all with `find({})` (driver cursor, batches of 1000);
//   - read the full list as refsync does (its `$or`, sort {version, itemId}, projection);
//   - insertMany in batches of 1000 (the 100k documents themselves);
//   - single-key updates: bulkWrite batches of 1000 `updateOne({_id}, {$set: {...}})`.
// Each figure is printed with its ratio to the floor for the same number of documents (for
// updates: the floor of the documents updated, although an update statement is much smaller than
// a document). Target for the reads: <= 3x. The driver and the server run in this one process, as
// the floor does: the ratios include the driver's own work, and the garbage collector's over the
// server's data.
//
// Then the journal (a server with a data file): the throughput of journaled writes (`j: true`,
// 16 clients, single-document updateOne and insertOne) at data sets of 10, 100 and 500 MB, whose
// ratio 500 MB / 10 MB should stay >= 0.8 (a write's cost must not grow with the data set), and the
// group-commit effect: the same writes with j: true over the same without j.
// Run: npm run bench -- mongo-server   (MONGO_BENCH_PART=reads or =journal runs one half)
import { deserialize, serialize } from 'bson';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient, type AnyBulkWriteOperation, type Document } from 'mongodb';
import pino from 'pino';
import { start, startServerProcess, type RunningMongoServer } from '@nhp/mongo-server';

const COUNT = 100_000;
const BATCH = 1000;
const TARGET = 3;
/** Rounds of the reads (and of the updates); the best of each is kept (the machine is shared). */
const ROUNDS = 5;
const DATASET = 'reimbursement-groups';

const now = (): number => Number(process.hrtime.bigint()) / 1e6;

/** A refsync item document (see libs/refsync/data-access models) of about 800 bytes as BSON. */
function item(i: number): Document {
  const itemId = `RG-${String(i).padStart(7, '0')}`;
  return {
    _id: `${DATASET}:${itemId}`,
    dataset: DATASET,
    itemId,
    version: 1 + (i % 50),
    data: {
      id: itemId,
      name: `Refusjonsgruppe ${i} for behandling av pasienter`,
      description:
        'Beskrivelse av refusjonsgruppen med litt tekst for realistisk storrelse. '.repeat(3),
      validFrom: '2024-01-01',
      validTo: null,
      codes: [`A${i % 97}`, `B${i % 89}`, `C${i % 83}`],
      amount: 1234.5 + i,
      category: { code: `K${i % 13}`, label: 'Kategori for refusjon' },
    },
    hash: 'a'.repeat(64),
    sourceHash: 'b'.repeat(64),
    isDeleted: i % 20 === 0,
    lastChanged: new Date(1_700_000_000_000 + i * 1000),
    prev: null,
  };
}

/** refsync's full list at version V (libs/refsync/data-access visibility.ts fullListAt). */
function fullListAt(version: number): Document {
  return {
    dataset: DATASET,
    $or: [
      { dataset: DATASET, isDeleted: false, version: { $lte: version } },
      { dataset: DATASET, version: { $gt: version }, prev: { $ne: null } },
    ],
  };
}
const ITEM_PROJECTION = {
  _id: 0,
  itemId: 1,
  data: 1,
  version: 1,
  lastChanged: 1,
  isDeleted: 1,
  prev: 1,
};

async function timed(fn: () => Promise<void> | void): Promise<number> {
  const t0 = now();
  await fn();
  return now() - t0;
}

export async function run(): Promise<void> {
  const part = process.env['MONGO_BENCH_PART'];
  if (part !== 'journal') await reads();
  if (part !== 'reads') await journal();
}

async function reads(): Promise<void> {
  const docs = Array.from({ length: COUNT }, (_, i) => item(i));
  const avgBytes = docs.reduce((s, d) => s + serialize(d).length, 0) / COUNT;

  // The floor: each document serialised once and deserialised once, in batches as on the wire.
  let sink = 0;
  const floor = (): void => {
    for (let from = 0; from < COUNT; from += BATCH) {
      const bytes = serialize({ batch: docs.slice(from, from + BATCH) });
      sink += (deserialize(bytes)['batch'] as unknown[]).length;
    }
  };

  const server = await start({ port: 0, logger: pino({ level: 'silent' }) });
  const client = new MongoClient(server.uri);
  try {
    await client.connect();
    const coll = client.db('bench').collection('items');
    await coll.createIndex({ dataset: 1, version: 1, itemId: 1 }, { name: 'dataset_version_item' });
    await coll.createIndex(
      { dataset: 1, isDeleted: 1, version: 1, itemId: 1 },
      { name: 'dataset_deleted_version_item' },
    );
    // Inserts (the documents all have an _id, so the driver adds nothing), measured once.
    const floorBeforeInsertMs = await timed(floor);
    const insertMs = await timed(async () => {
      for (let from = 0; from < COUNT; from += BATCH)
        await coll.insertMany(docs.slice(from, from + BATCH), { ordered: true });
    });
    const floorAfterInsertMs = await timed(floor);

    // Reads: the floor and both reads in each round, so that the machine's speed (shared, it
    // changes from second to second) affects all three alike; the best of each is kept.
    const expected = docs.filter((d) => !d['isDeleted']).length;
    let floorMs = Math.min(floorBeforeInsertMs, floorAfterInsertMs);
    let findMs = Number.POSITIVE_INFINITY;
    let listMs = Number.POSITIVE_INFINITY;
    for (let round = 0; round < ROUNDS; round++) {
      floorMs = Math.min(floorMs, await timed(floor));
      let read = 0;
      findMs = Math.min(
        findMs,
        await timed(async () => {
          read = (await coll.find({}, { batchSize: BATCH }).toArray()).length;
        }),
      );
      if (read !== COUNT) throw new Error(`find read ${read} documents, expected ${COUNT}`);
      listMs = Math.min(
        listMs,
        await timed(async () => {
          read = (
            await coll
              .find(fullListAt(50), { projection: ITEM_PROJECTION, batchSize: BATCH })
              .sort({ version: 1, itemId: 1 })
              .toArray()
          ).length;
        }),
      );
      if (read !== expected) throw new Error(`full list read ${read}, expected ${expected}`);
    }
    if (sink === 0) throw new Error('floor measured nothing');

    const UPDATES = 20_000;
    let updateMs = Number.POSITIVE_INFINITY;
    for (let round = 0; round < ROUNDS; round++) {
      floorMs = Math.min(floorMs, await timed(floor));
      updateMs = Math.min(
        updateMs,
        await timed(async () => {
          for (let from = 0; from < UPDATES; from += BATCH) {
            const ops: AnyBulkWriteOperation[] = [];
            for (let i = from; i < from + BATCH; i++) {
              const d = docs[(i * 7919) % COUNT] as Document;
              ops.push({
                updateOne: {
                  filter: { _id: d['_id'] },
                  update: { $set: { hash: `h${round}-${i}`, lastChanged: new Date() } },
                },
              });
            }
            const res = await coll.bulkWrite(ops, { ordered: true });
            if (res.modifiedCount !== BATCH) throw new Error('update missed');
          }
        }),
      );
    }

    const perDoc = floorMs / COUNT;
    const ratio = (ms: number, n: number): number => ms / (perDoc * n);
    const verdict = (r: number): string => (r <= TARGET ? 'OK' : 'OVER TARGET');
    const rFind = ratio(findMs, COUNT);
    const rList = ratio(listMs, COUNT);
    const rInsert = ratio(insertMs, COUNT);
    const rUpdate = ratio(updateMs, UPDATES);
    const lines = [
      `mongo-server benchmark: ${COUNT} documents of ${avgBytes.toFixed(0)} bytes, official driver over loopback`,
      `  floor: BSON serialise + deserialise in process : ${floorMs.toFixed(0)} ms (${Math.round(COUNT / (floorMs / 1000))} docs/s)`,
      `  find({}) all, batches of ${BATCH}                : ${findMs.toFixed(0)} ms  ratio ${rFind.toFixed(2)}x (target <= ${TARGET}x) ${verdict(rFind)}`,
      `  refsync full list ($or, sort, projection)       : ${listMs.toFixed(0)} ms  ratio ${rList.toFixed(2)}x (target <= ${TARGET}x) ${verdict(rList)}`,
      `  insertMany, batches of ${BATCH}, 2 indexes        : ${Math.round(COUNT / (insertMs / 1000))} docs/s  ratio ${rInsert.toFixed(2)}x of the floor's time`,
      `  updateOne({_id}, {$set}) in bulks of ${BATCH}      : ${Math.round(UPDATES / (updateMs / 1000))} updates/s  ratio ${rUpdate.toFixed(2)}x of the floor's time`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await client.close();
    await server.stop();
  }
}

// --- journal -------------------------------------------------------------------------------------

const CLIENTS = 16;
/** Documents of the data set: ~4 KB each (a text field), so 500 MB is 125k documents. */
const FILLER_BYTES = 4096;
const LEVELS_MB = [10, 100, 500];
/** Rounds per figure; the best is kept, as for the reads (others' work on the machine only slows). */
const JOURNAL_ROUNDS = 5;
const ROUND_MS = 2000;

function filler(i: number): Document {
  return {
    _id: `doc-${String(i).padStart(7, '0')}`,
    n: i,
    kind: `k${i % 17}`,
    at: new Date(1_700_000_000_000 + i * 1000),
    text: `${i} `.padEnd(FILLER_BYTES, 'lorem ipsum dolor sit amet '),
  };
}

/**
 * 16 clients write for ROUND_MS, each one write at a time, alternating an updateOne of a random
 * document of the data set (by _id; it must match and modify) and an insertOne of a small event.
 * Returns writes per second.
 */
async function writeRound(
  clients: MongoClient[],
  documents: number,
  j: boolean,
  round: string,
): Promise<number> {
  const writeConcern = j ? { w: 1, j: true } : { w: 1 };
  const until = now() + ROUND_MS;
  let writes = 0;
  await Promise.all(
    clients.map(async (client, k) => {
      const db = client.db('bench');
      const data = db.collection('data');
      const events = db.collection('events');
      for (let i = 0; now() < until; i++) {
        if (i % 2 === 0) {
          const n = Math.floor(Math.random() * documents);
          const res = await data.updateOne(
            { _id: filler(n)['_id'] } as never,
            { $set: { n: -i, by: `${round}-${k}` } },
            { writeConcern },
          );
          if (res.matchedCount !== 1 || res.modifiedCount !== 1)
            throw new Error(`updateOne of document ${n} did not modify it`);
        } else {
          const _id = `${round}-${k}-${i}`;
          const res = await events.insertOne({ _id, k, i, at: new Date() } as never, {
            writeConcern,
          });
          if (!res.acknowledged || String(res.insertedId) !== _id)
            throw new Error('insertOne failed');
        }
        writes++;
      }
    }),
  );
  return writes / (ROUND_MS / 1000);
}

async function journal(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-mongo-journal-'));
  const dataFile = path.join(dir, 'bench.bson');
  let server: RunningMongoServer | undefined;
  const clients: MongoClient[] = [];
  try {
    server = await start({ port: 0, dataFile, logger: pino({ level: 'silent' }) });
    const persistence = server.persistence;
    if (!persistence) throw new Error('no journal');
    for (let k = 0; k < CLIENTS; k++)
      clients.push(await new MongoClient(server.uri, { maxPoolSize: 1 }).connect());
    const loader = clients[0] as MongoClient;
    const docBytes = serialize(filler(0)).length;
    const lines = [
      `journaled writes: ${CLIENTS} clients, one write at a time each, updateOne({_id}, {$set}) of a random ${docBytes}-byte document / insertOne of an event, alternating; rounds of ${ROUND_MS} ms, best of ${JOURNAL_ROUNDS}`,
    ];
    let loaded = 0;
    const perLevel: number[] = [];
    let groupCommit = '';
    for (const mb of LEVELS_MB) {
      const target = Math.ceil((mb * 1024 * 1024) / docBytes);
      const loadStarted = now();
      while (loaded < target) {
        const batch = Array.from({ length: Math.min(250, target - loaded) }, (_x, i) =>
          filler(loaded + i),
        );
        const res = await loader.db('bench').collection('data').insertMany(batch);
        if (res.insertedCount !== batch.length) throw new Error('insertMany missed documents');
        loaded += batch.length;
      }
      const loadMs = now() - loadStarted;
      // The data set as compaction leaves it: one snapshot, a short journal (the first call waits
      // for a compaction the load started, the second covers everything). Compactions that the
      // rounds' own writes start (the journal passing 64 MB) are part of the cost, and counted.
      await persistence.compact();
      await persistence.compact();
      const compactions = persistence.stats().compactions;
      const rates: number[] = [];
      const plain: number[] = [];
      const fsyncsBefore = persistence.stats().fsyncs;
      const recordsBefore = persistence.stats().records;
      for (let r = 0; r < JOURNAL_ROUNDS; r++) {
        rates.push(await writeRound(clients, loaded, true, `${mb}-j-${r}`));
        // The baseline of the group-commit ratio, right after each journaled round.
        if (mb === LEVELS_MB[0])
          plain.push(await writeRound(clients, loaded, false, `${mb}-w-${r}`));
      }
      const rate = Math.max(...rates);
      perLevel.push(rate);
      const st = persistence.stats();
      lines.push(
        `  data set ${String(mb).padStart(3)} MB (${loaded} documents, snapshot ${(st.snapshotBytes / 1048576).toFixed(0)} MB; loaded in ${(loadMs / 1000).toFixed(1)} s): ${rate.toFixed(0)} writes/s (rounds ${rates.map((x) => x.toFixed(0)).join(', ')}; compactions during them: ${st.compactions - compactions})`,
      );
      if (plain.length) {
        const fsyncsPerRecord = (st.fsyncs - fsyncsBefore) / (st.records - recordsBefore);
        const ratio = rate / Math.max(...plain);
        groupCommit = `  group commit at ${mb} MB: j: true ${rate.toFixed(0)} writes/s / without j ${Math.max(...plain).toFixed(0)} writes/s = ${ratio.toFixed(2)} (fsyncs per journal record in these rounds: ${fsyncsPerRecord.toFixed(3)})`;
      }
    }
    const flat = (perLevel[perLevel.length - 1] as number) / (perLevel[0] as number);
    lines.push(
      `  ratio ${LEVELS_MB[LEVELS_MB.length - 1]} MB / ${LEVELS_MB[0]} MB: ${flat.toFixed(2)} (target >= 0.8) ${flat >= 0.8 ? 'OK' : 'BELOW TARGET'}`,
    );
    lines.push(groupCommit);

    // Start-up on the largest data set, in a process of its own (here the garbage of the stopped
    // server would be collected during the load): loading against reading the files alone.
    for (const c of clients.splice(0)) await c.close();
    await server.stop();
    server = undefined;
    const files = (await readdir(dir)).map((f) => path.join(dir, f));
    const readStarted = now();
    let bytes = 0;
    for (const f of files) bytes += (await readFile(f)).length;
    const readMs = now() - readStarted;
    const child = await startServerProcess({ dataFile });
    try {
      const loadedLine = await child.waitForLog('data file loaded');
      const check = await new MongoClient(child.uri).connect();
      clients.push(check);
      const count = await check.db('bench').collection('data').countDocuments();
      if (count !== loaded) throw new Error(`restart found ${count} documents, expected ${loaded}`);
      lines.push(
        `  start-up on ${(bytes / 1048576).toFixed(0)} MB of files (snapshot + ${loadedLine['journalRecords']} journal records), own process: ${(Number(loadedLine['ms']) / 1000).toFixed(1)} s (reading the files alone: ${(readMs / 1000).toFixed(1)} s)`,
      );
    } finally {
      for (const c of clients.splice(0)) await c.close();
      await child.stop();
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const c of clients) await c.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
