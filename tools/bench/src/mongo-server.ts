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
// Then the journal: the throughput of journaled writes (`j: true`, 16 clients, single-document
// updateOne and insertOne) against servers (each in its own process, with its data file) holding
// 10, 100 and 500 MB, in rounds that alternate between them so that the shared machine's changes
// hit all alike; the ratio 500 MB / 10 MB should stay >= 0.8 (a write's cost must not grow with
// the data set). And the group-commit effect: the same writes with j: true over the same without j.
// Run: npm run bench -- mongo-server   (MONGO_BENCH_PART=reads or =journal runs one half)
import { deserialize, serialize } from 'bson';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient, type AnyBulkWriteOperation, type Document } from 'mongodb';
import pino from 'pino';
import { start, startServerProcess, type ServerProcess } from '@nhp/mongo-server';

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
/** Cycles of rounds; each cycle runs one round on every server, back to back. */
const CYCLES = 15;
const ROUND_MS = 1000;

const idOf = (i: number): string => `doc-${String(i).padStart(7, '0')}`;

function filler(i: number): Document {
  return {
    _id: idOf(i),
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
            { _id: idOf(n) } as never,
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

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

/** Writes a data file of `documents` filler documents: loaded through the driver, compacted. */
async function buildDataFile(dataFile: string, documents: number): Promise<number> {
  const server = await start({ port: 0, dataFile, logger: pino({ level: 'silent' }) });
  const client = await new MongoClient(server.uri).connect();
  const started = now();
  try {
    for (let from = 0; from < documents; from += 250) {
      const batch = Array.from({ length: Math.min(250, documents - from) }, (_x, i) =>
        filler(from + i),
      );
      const res = await client.db('bench').collection('data').insertMany(batch);
      if (res.insertedCount !== batch.length) throw new Error('insertMany missed documents');
    }
    // One snapshot and an empty journal (the first call waits for a compaction the load started).
    await server.persistence?.compact();
    await server.persistence?.compact();
    return now() - started;
  } finally {
    await client.close();
    await server.stop();
  }
}

interface Level {
  mb: number;
  documents: number;
  server: ServerProcess;
  clients: MongoClient[];
  j: number[];
  /** CPU milliseconds the server process spent in its j rounds, and the writes they made. */
  cpuMs: number;
  writes: number;
}

/** CPU milliseconds (user + system) a process has used, from /proc/<pid>/stat (Linux). */
async function cpuMsOf(pid: number | undefined): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

async function journal(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-mongo-journal-'));
  const levels: Level[] = [];
  const docBytes = serialize(filler(0)).length;
  const lines = [
    `journaled writes: a server process per data set, ${CLIENTS} clients each, one write at a time, updateOne({_id}, {$set}) of a random ${docBytes}-byte document / insertOne of an event, alternating; ${CYCLES} cycles of ${ROUND_MS} ms rounds (10 MB with j, 10 MB without j, 100 MB, 500 MB), medians`,
  ];
  try {
    for (const mb of LEVELS_MB) {
      const documents = Math.ceil((mb * 1024 * 1024) / docBytes);
      const dataFile = path.join(dir, `${mb}mb.bson`);
      const buildMs = await buildDataFile(dataFile, documents);
      // Its own process: each data set's heap and garbage collector apart from the others' and
      // the clients'; the same start-up as `npm start`'s.
      const server = await startServerProcess({ dataFile });
      const loadedLine = await server.waitForLog('data file loaded');
      const clients: MongoClient[] = [];
      levels.push({ mb, documents, server, clients, j: [], cpuMs: 0, writes: 0 });
      for (let k = 0; k < CLIENTS; k++)
        clients.push(await new MongoClient(server.uri, { maxPoolSize: 1 }).connect());
      const fileBytes = (await stat(dataFile)).size;
      const readStarted = now();
      await readFile(dataFile);
      const readMs = now() - readStarted;
      lines.push(
        `  data set ${String(mb).padStart(3)} MB: ${documents} documents, snapshot ${(fileBytes / 1048576).toFixed(0)} MB (loaded through the driver in ${(buildMs / 1000).toFixed(1)} s); start-up of its process ${(Number(loadedLine['ms']) / 1000).toFixed(1)} s (reading the file alone ${(readMs / 1000).toFixed(1)} s)`,
      );
    }
    const [small, , large] = levels as [Level, Level, Level];
    const plain: number[] = [];
    const ratios: number[] = [];
    const groupRatios: number[] = [];
    for (let c = 0; c < CYCLES; c++) {
      for (const level of levels) {
        const cpuBefore = await cpuMsOf(level.server.pid);
        const rate = await writeRound(level.clients, level.documents, true, `${level.mb}-j-${c}`);
        level.cpuMs += (await cpuMsOf(level.server.pid)) - cpuBefore;
        level.writes += (rate * ROUND_MS) / 1000;
        level.j.push(rate);
        if (level === small)
          plain.push(await writeRound(small.clients, small.documents, false, `${level.mb}-w-${c}`));
      }
      ratios.push((large.j[c] as number) / (small.j[c] as number));
      groupRatios.push((small.j[c] as number) / (plain[c] as number));
    }
    for (const level of levels) {
      const compactions = level.server.lines.filter(
        (l) => l['msg'] === 'compaction wrote a new snapshot',
      ).length;
      lines.push(
        `  j: true at ${String(level.mb).padStart(3)} MB: ${median(level.j).toFixed(0)} writes/s (rounds ${Math.min(...level.j).toFixed(0)}-${Math.max(...level.j).toFixed(0)}), server CPU ${((level.cpuMs / level.writes) * 1000).toFixed(0)} us per write, compactions during the rounds: ${compactions}`,
      );
    }
    const flat = median(ratios);
    const cpuRatio = large.cpuMs / large.writes / (small.cpuMs / small.writes);
    lines.push(
      `  writes/s ${large.mb} MB / ${small.mb} MB, median of the ${CYCLES} cycles' ratios (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}): ${flat.toFixed(2)} (target >= 0.8) ${flat >= 0.8 ? 'OK' : 'BELOW TARGET'}`,
    );
    lines.push(
      `  server CPU per write ${large.mb} MB / ${small.mb} MB: ${cpuRatio.toFixed(2)} (CPU time is less disturbed than writes/s by the machine's other work)`,
    );
    lines.push(
      `  group commit at ${small.mb} MB: j: true ${median(small.j).toFixed(0)} writes/s, without j ${median(plain).toFixed(0)} writes/s; ratio (median of the cycles', ${Math.min(...groupRatios).toFixed(2)}-${Math.max(...groupRatios).toFixed(2)}) ${median(groupRatios).toFixed(2)}`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const level of levels) {
      for (const c of level.clients) await c.close();
      await level.server.stop();
    }
    await rm(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
