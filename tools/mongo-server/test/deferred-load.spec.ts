// Start-up keeps a snapshot's documents as they were read and loads a collection only when it is
// first used, when the journal changes it beyond appending to it, or in the background once the
// server answers (Collection.deferLoad says why). What must hold: a command sees a collection
// whole, in its natural order, unique indexes refuse duplicates of documents not loaded yet, and a
// snapshot taken meanwhile holds every document.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deserialize, serialize } from 'bson';
import { MongoClient } from 'mongodb';
import pino from 'pino';
import type { Collection } from '../src/collection';
import { start } from '../src/index';
import { Persistence } from '../src/persistence';
import { captureStore, loadSnapshot } from '../src/snapshot';
import { Store } from '../src/store';

interface Item {
  _id: number;
  n: number;
}

const silent = pino({ level: 'silent' });

/** Ids in an order other than their own, so that natural order is seen to be kept. */
const scrambled = (count: number): number[] =>
  Array.from({ length: count }, (_, i) => (i * 7919) % count);

async function withDir<T>(fn: (dataFile: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'deferred-load-'));
  try {
    return await fn(path.join(dir, 'data'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `fn` against a server on `dataFile`, then stops it (a snapshot unless `snapshotOnStop`). */
async function withServer(
  dataFile: string,
  fn: (client: MongoClient) => Promise<void>,
  snapshotOnStop = true,
): Promise<void> {
  const server = await start({ dataFile, logger: silent, journal: { snapshotOnStop } });
  const client = await MongoClient.connect(server.uri);
  try {
    await fn(client);
  } finally {
    await client.close();
    await server.stop();
  }
}

const items = (client: MongoClient) => client.db('db').collection<Item>('items');

describe('collections loaded after start-up', () => {
  it('when a snapshot is loaded, then its collections wait unloaded, and the first use loads each whole, in natural order', async () => {
    await withDir(async (dataFile) => {
      const ids = scrambled(3000);
      await withServer(dataFile, async (client) => {
        await items(client).insertMany(ids.map((id) => ({ _id: id, n: id })));
        await client
          .db('db')
          .collection('other')
          .insertOne({ _id: 1 as never });
      });

      const store = new Store();
      await loadSnapshot(dataFile, store);
      const coll = store.collection('db', 'items') as Collection;
      const other = store.collection('db', 'other') as Collection;

      expect([coll.loadPending, other.loadPending]).toEqual([true, true]);
      expect(coll.documentCount).toBe(3000);
      expect([...coll.records].map((r) => r.view['_id'])).toEqual(ids);
      expect([coll.loadPending, other.loadPending]).toEqual([false, true]);
      expect(coll.byId(ids[2999])?.view).toEqual({ _id: ids[2999], n: ids[2999] });
    });
  });

  it('when the journal only inserts into a collection, then replay leaves it unloaded with the inserts after the snapshot, and loads a collection it updates', async () => {
    await withDir(async (dataFile) => {
      await withServer(dataFile, async (client) => {
        await items(client).insertMany([3, 1, 2].map((id) => ({ _id: id, n: id })));
        await client
          .db('db')
          .collection('updated')
          .insertOne({ _id: 1 as never, n: 1 });
      });
      await withServer(
        dataFile,
        async (client) => {
          await items(client).insertMany([{ _id: 0, n: 0 }]);
          await items(client).insertOne({ _id: 9, n: 9 });
          await client
            .db('db')
            .collection('updated')
            .updateOne({ _id: 1 as never }, { $set: { n: 2 } });
        },
        false,
      );

      const store = new Store();
      const persistence = await Persistence.open(store, dataFile, silent, {
        snapshotOnStop: false,
      });
      try {
        const coll = store.collection('db', 'items') as Collection;
        const updated = store.collection('db', 'updated') as Collection;

        expect([coll.loadPending, updated.loadPending]).toEqual([true, false]);
        expect(coll.documentCount).toBe(5);
        expect([...coll.records].map((r) => r.view['_id'])).toEqual([3, 1, 2, 0, 9]);
        expect([...updated.records].map((r) => r.view)).toEqual([{ _id: 1, n: 2 }]);
      } finally {
        await persistence.close();
      }
    });
  });

  it('when commands come while the collections load in the background, then each sees every document and duplicates of unloaded ones are refused', async () => {
    await withDir(async (dataFile) => {
      const count = 20_000;
      const ids = scrambled(count);
      await withServer(dataFile, async (client) => {
        await items(client).createIndex({ n: 1 });
        await items(client).insertMany(ids.map((id) => ({ _id: id, n: id })));
        await client
          .db('db')
          .collection('later')
          .insertMany(ids.slice(0, 5000).map((id) => ({ _id: id as never })));
      });
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const server = await start({ dataFile, logger });
      const client = await MongoClient.connect(server.uri);
      try {
        // The last document of the snapshot's collection, not loaded by any batch yet.
        const last = ids[count - 1] as number;
        const later = client.db('db').collection('later');
        const answers = await Promise.all([
          later.countDocuments(),
          later.insertOne({ _id: ids[4999] as never }).catch((err: Error) => err.message),
          items(client).countDocuments({ n: { $gte: 10_000 } }),
          items(client)
            .insertOne({ _id: last, n: -1 })
            .catch((err: Error) => err.message),
          items(client).findOne({ _id: last }),
        ]);
        await items(client).insertOne({ _id: count, n: count });
        const all = await items(client)
          .find({}, { projection: { _id: 1 } })
          .toArray();

        expect(answers).toEqual([
          5000,
          expect.stringMatching(/E11000.*db\.later.*_id_/),
          10_000,
          expect.stringMatching(/E11000.*db\.items.*_id_/),
          { _id: last, n: last },
        ]);
        expect(all.map((d) => d._id)).toEqual([...ids, count]);
        await waitFor(() => lines.some((l) => l.includes('deferred collections loaded')));
        expect(lines.some((l) => l.includes('"level":60'))).toBe(false);
      } finally {
        await client.close();
        await server.stop();
      }
    });
  });

  it('when a collection is partly loaded, then a write loads the rest first: a duplicate of an unloaded document is refused and the new one comes last', async () => {
    await withDir(async (dataFile) => {
      const ids = scrambled(2000);
      await withServer(dataFile, async (client) => {
        await items(client).insertMany(ids.map((id) => ({ _id: id, n: id })));
      });
      const store = new Store();
      await loadSnapshot(dataFile, store);
      const coll = store.collection('db', 'items') as Collection;
      expect(coll.loadSome(700)).toBe(true);

      expect(() => coll.insert({ _id: ids[1999], n: 0 })).toThrow(/E11000.*_id_/);
      coll.insert({ _id: 5000, n: 5000 });

      expect(coll.loadPending).toBe(false);
      expect([...coll.records].map((r) => r.view['_id'])).toEqual([...ids, 5000]);
    });
  });

  it('when a snapshot is taken while a collection is partly loaded, then it holds every document in natural order without loading the rest', async () => {
    await withDir(async (dataFile) => {
      const ids = scrambled(2000);
      await withServer(dataFile, async (client) => {
        await items(client).insertMany(ids.map((id) => ({ _id: id, n: id })));
      });
      const store = new Store();
      await loadSnapshot(dataFile, store);
      const coll = store.collection('db', 'items') as Collection;

      expect(coll.loadSome(700)).toBe(true);
      const capture = captureStore(store);

      expect(coll.loadPending).toBe(true);
      const [captured] = capture.collections;
      expect(captured?.raws.map((raw) => (deserialize(raw) as Item)._id)).toEqual(ids);
      expect(capture.documents).toBe(2000);
    });
  });

  it('when the server is stopped while collections load, then the stop writes every document and the next start has them all', async () => {
    await withDir(async (dataFile) => {
      const ids = scrambled(30_000);
      await withServer(dataFile, async (client) => {
        await items(client).insertMany(ids.map((id) => ({ _id: id, n: id })));
      });
      // Stopped at once: the background load has done at most a batch or two.
      const server = await start({ dataFile, logger: silent });
      await server.stop();
      await withServer(dataFile, async (client) => {
        const all = await items(client).find({}).toArray();
        expect(all).toEqual(ids.map((id) => ({ _id: id, n: id })));
      });
    });
  });

  it('when documents are loaded by hand with deferLoad, then a document the unique index refuses marks the collection damaged for every later access', () => {
    const store = new Store();
    const coll = store.ensureCollection('db', 'c');
    coll.deferLoad();
    for (const id of [1, 2, 1, 3]) coll.load(serialize({ _id: id }));

    expect(() => coll.loadSome(10)).toThrow(/db\.c cannot be served.*E11000/);
    expect(() => coll.records).toThrow(/damaged/);
    expect(() => coll.indexes).toThrow(/damaged/);
    expect(coll.damaged?.codeName).toBe('InternalError');
    // A snapshot keeps the documents as they were read.
    expect(coll.rawsToSnapshot().map((raw) => deserialize(raw)['_id'])).toEqual([1, 2, 1, 3]);
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}
