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
// Run: npm run bench -- mongo-server
import { deserialize, serialize } from 'bson';
import { MongoClient, type AnyBulkWriteOperation, type Document } from 'mongodb';
import pino from 'pino';
import { start } from '@nhp/mongo-server';

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

if (require.main === module) {
  run().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
