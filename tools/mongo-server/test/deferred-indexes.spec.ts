// Start-up builds only the trees of unique indexes (_id_ among them) as it loads a collection; a
// non-unique index's tree is built once the server answers (Store.buildDeferredIndexes, a batch per
// turn of the event loop), or at once by the first lookup that needs it (Collection.restoreIndex
// says why). What must hold: every query sees what a tree built in one go would give, whatever was
// written while the build ran, and writes are refused exactly as before.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serialize } from 'bson';
import { MongoClient } from 'mongodb';
import pino from 'pino';
import type { Collection } from '../src/collection';
import { start } from '../src/index';
import { Index, type IndexSpec, type StoredRecord } from '../src/indexes';
import { loadSnapshot } from '../src/snapshot';
import { Store } from '../src/store';

const SPEC: IndexSpec = { v: 2, key: { g: 1, n: 1 }, name: 'g_1_n_1' };
const GROUPS = 10;

interface Item {
  _id: number;
  g: number;
  n: number;
}

/** A collection as start-up leaves it: the index restored (deferred), `count` documents loaded. */
function loaded(count: number): { store: Store; coll: Collection } {
  const store = new Store();
  const coll = store.ensureCollection('db', 'items');
  coll.restoreIndex(SPEC);
  for (let i = 0; i < count; i++) coll.load(serialize({ _id: i, g: i % GROUPS, n: i }));
  return { store, coll };
}

const ids = (records: Iterable<StoredRecord>): number[] =>
  [...records].map((r) => r.view['_id'] as number).sort((a, b) => a - b);

/**
 * Whether the collection's (deferred) index answers every lookup and scan as a tree built in one
 * go over the records as they are now does.
 */
function expectSameAsBuiltInOneGo(coll: Collection): void {
  const index = coll.indexes.get(SPEC.name) as Index;
  const reference = new Index(SPEC, 'db.items');
  for (const r of coll.records) reference.add(r, reference.keysOf(r));
  const values = new Set<number>();
  for (const r of coll.records) values.add(r.view['n'] as number);
  for (let g = -1; g <= GROUPS; g++) {
    expect(ids(index.scan([[g]]))).toEqual(ids(reference.scan([[g]])));
    const range = { lo: 1000, loInclusive: true, hi: 3000, hiInclusive: false };
    expect(ids(index.scan([[g]], range))).toEqual(ids(reference.scan([[g]], range)));
    for (const n of values)
      expect(ids(index.lookup([g, n]))).toEqual(ids(reference.lookup([g, n])));
  }
}

describe('non-unique indexes built after start-up', () => {
  it('when a collection is loaded, then its non-unique index is left unbuilt and its unique ones are built', () => {
    const { coll } = loaded(100);
    coll.restoreIndex({ v: 2, key: { n: 1 }, name: 'n_1', unique: true });

    expect((coll.indexes.get(SPEC.name) as Index).deferred).toBe(true);
    expect((coll.indexes.get('n_1') as Index).deferred).toBe(false);
    expect((coll.indexes.get('_id_') as Index).deferred).toBe(false);
  });

  it('when a query needs an unbuilt index, then it finds what a full scan finds', () => {
    const { coll } = loaded(5000);

    const found = ids(coll.candidates({ g: 3, n: { $gte: 100, $lt: 200 } }));

    expect(found).toEqual([103, 113, 123, 133, 143, 153, 163, 173, 183, 193]);
    expect((coll.indexes.get(SPEC.name) as Index).pending).toBe(false);
    expectSameAsBuiltInOneGo(coll);
  });

  it('when documents are inserted, changed and deleted between the turns of the build, then the finished tree holds exactly the documents as they are', async () => {
    const { store, coll } = loaded(5000);
    const index = coll.indexes.get(SPEC.name) as Index;
    const byId = (id: number) => coll.byId(id) as StoredRecord;
    let turns = 0;
    // Before the build begins: writes leave the index as it is (the build reads them).
    coll.insert({ _id: 10_000, g: 1, n: 10_000 });
    coll.replace(byId(4000), { _id: 4000, g: 5, n: 4001 });
    coll.remove(byId(4001));
    const building = store.buildDeferredIndexes(() => false);
    // Between turns, records the build has passed (low ids) and not reached yet (high ids).
    while (index.pending) {
      turns++;
      const t = turns;
      coll.insert({ _id: 20_000 + t, g: t % GROUPS, n: 20_000 + t });
      coll.replace(byId(t), { _id: t, g: (t + 1) % GROUPS, n: t });
      coll.replace(byId(4999 - t), { _id: 4999 - t, g: 7, n: 1 });
      coll.remove(byId(100 + t));
      coll.remove(byId(4900 - t));
      await new Promise(setImmediate);
    }
    await building;

    expect(turns).toBeGreaterThan(1);
    expectSameAsBuiltInOneGo(coll);
  });

  it('when a document a compound index cannot hold is written before that index is built, then it is refused as before', () => {
    const store = new Store();
    const coll = store.ensureCollection('db', 'items');
    coll.restoreIndex({ v: 2, key: { a: 1, b: 1 }, name: 'a_1_b_1' });
    coll.load(serialize({ _id: 1, a: 1, b: 1 }));

    expect(() => coll.insert({ _id: 2, a: [1, 2], b: [3, 4] })).toThrow(
      expect.objectContaining({ codeName: 'CannotIndexParallelArrays' }),
    );
    expect(() =>
      coll.replace(coll.byId(1) as StoredRecord, { _id: 1, a: [1, 2], b: [2, 3] }),
    ).toThrow(expect.objectContaining({ codeName: 'CannotIndexParallelArrays' }));
    expect(coll.records.size).toBe(1);
  });

  it('when the server restarts on a snapshot and a journal, then queries by a non-unique index see every change, before and after its build', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'deferred-indexes-'));
    const dataFile = path.join(dir, 'data');
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    try {
      let server = await start({ dataFile, logger });
      let client = await MongoClient.connect(server.uri);
      const items = () => client.db('db').collection<Item>('items');
      await items().createIndex({ g: 1, n: 1 });
      await items().insertMany(
        Array.from({ length: 6000 }, (_, i) => ({ _id: i, g: i % 10, n: i })),
      );
      await client.close();
      await server.stop(); // a snapshot
      server = await start({ dataFile, logger, journal: { snapshotOnStop: false } });
      client = await MongoClient.connect(server.uri);
      await items().updateMany({ _id: { $lt: 100 } }, { $set: { g: 42 } });
      await items().deleteMany({ _id: { $gte: 5900 } });
      await items().insertOne({ _id: 9000, g: 42, n: 9000 });
      await client.close();
      await server.stop(); // the changes only in the journal

      lines.length = 0;
      server = await start({ dataFile, logger });
      client = await MongoClient.connect(server.uri);
      // At once, while the build may still run, then once it has run.
      const first = await items().find({ g: 42 }).sort({ _id: 1 }).toArray();
      await items().insertOne({ _id: 9001, g: 42, n: 9001 });
      await client.close();
      await server.stop();
      server = await start({ dataFile, logger });
      client = await MongoClient.connect(server.uri);
      const count = await items().countDocuments({ g: 3, n: { $gte: 5000 } });
      const after = await items().find({ g: 42 }).sort({ _id: 1 }).toArray();
      await client.close();
      await server.stop();

      const expected = [
        ...Array.from({ length: 100 }, (_, i) => ({ _id: i, g: 42, n: i })),
        { _id: 9000, g: 42, n: 9000 },
      ];
      expect(first).toEqual(expected);
      expect(after).toEqual([...expected, { _id: 9001, g: 42, n: 9001 }]);
      // g: 3 and n from 5000: 5003 ... 5893 (5900 on were deleted).
      expect(count).toBe(90);
      expect(lines.some((l) => l.includes('deferred indexes built'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('when a snapshot is loaded, then only its non-unique indexes are left for later', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'deferred-indexes-'));
    const dataFile = path.join(dir, 'data');
    try {
      const server = await start({ dataFile });
      const client = await MongoClient.connect(server.uri);
      const items = client.db('db').collection<Item>('items');
      await items.createIndex({ g: 1 });
      await items.createIndex({ n: 1 }, { unique: true });
      await items.insertMany([{ _id: 1, g: 1, n: 1 }]);
      await client.close();
      await server.stop();

      const store = new Store();
      await loadSnapshot(dataFile, store);
      const indexes = (store.collection('db', 'items') as Collection).indexes;

      expect([...indexes.values()].map((i) => [i.name, i.deferred])).toEqual([
        ['_id_', false],
        ['g_1', true],
        ['n_1', false],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
