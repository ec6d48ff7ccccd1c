// Start-up keeps the documents it loads as views into the chunks of the files they were read from,
// and gives them buffers of their own once the server answers (Store.ownLoadedBytes, started by
// Persistence.finishStartup): a view left in place would keep its whole 8 MiB chunk alive (README
// "Memory"), and the copy must never change what a document holds, even beside writes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serialize } from 'bson';
import { MongoClient } from 'mongodb';
import pino from 'pino';
import { start } from '../src/index';
import type { StoredRecord } from '../src/indexes';
import { Store } from '../src/store';

const ownsItsBuffer = (raw: Uint8Array | undefined): boolean =>
  raw !== undefined && raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;

/** `count` documents serialised one after another into one buffer, as a file chunk holds them. */
function chunkOf(count: number): { chunk: Buffer; views: Uint8Array[] } {
  const docs = Array.from({ length: count }, (_, i) => serialize({ _id: i, name: `doc ${i}` }));
  const chunk = Buffer.concat(docs);
  const views: Uint8Array[] = [];
  let at = 0;
  for (const d of docs) {
    views.push(chunk.subarray(at, at + d.length));
    at += d.length;
  }
  return { chunk, views };
}

describe('documents loaded at start-up get buffers of their own', () => {
  it('when the store has loaded views into a chunk, then ownLoadedBytes copies each into a buffer of its own, with the same bytes', async () => {
    const store = new Store();
    const coll = store.ensureCollection('db', 'c');
    // More than one batch, so that the copy spans turns of the event loop.
    const { views } = chunkOf(5000);
    for (const v of views) coll.load(v);
    const records = [...coll.records];
    expect(records.every((r) => !ownsItsBuffer(r.raw))).toBe(true);

    const copying = store.ownLoadedBytes(() => false);
    // A write between two batches, to a record the copy has not reached: it gets bytes of its own
    // at once, and the copy leaves it alone.
    await new Promise(setImmediate);
    const replaced = records[4999] as StoredRecord;
    coll.replace(replaced, { _id: 4999, name: 'changed' });
    const copied = await copying;

    expect(copied).toBe(4999);
    for (const [i, r] of records.entries()) {
      expect(ownsItsBuffer(r.raw)).toBe(true);
      if (r !== replaced)
        expect(Buffer.from(r.raw as Uint8Array)).toEqual(Buffer.from(views[i] as Uint8Array));
    }
    expect(replaced.view).toEqual({ _id: 4999, name: 'changed' });
  });

  it('when the server is stopping, then ownLoadedBytes ends after the batch it is in', async () => {
    const store = new Store();
    const coll = store.ensureCollection('db', 'c');
    const { views } = chunkOf(5000);
    for (const v of views) coll.load(v);

    const copied = await store.ownLoadedBytes(() => true);

    expect(copied).toBeLessThan(5000);
    expect(copied).toBeGreaterThan(0);
  });

  it('when the server restarts on a data folder and is written at once, then every document reads back as last written', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'loaded-bytes-'));
    const dataFile = path.join(dir, 'data');
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    try {
      // A snapshot (clean stop) and a journal after it (a stop that writes no snapshot).
      let server = await start({ dataFile, logger });
      let client = await MongoClient.connect(server.uri);
      const docs = client.db('db').collection<{ _id: number; v: string }>('c');
      await docs.insertMany(Array.from({ length: 6000 }, (_, i) => ({ _id: i, v: `first ${i}` })));
      await client.close();
      await server.stop();
      server = await start({ dataFile, logger, journal: { snapshotOnStop: false } });
      client = await MongoClient.connect(server.uri);
      await client
        .db('db')
        .collection<{ _id: number; v: string }>('c')
        .updateMany({ _id: { $gte: 3000 } }, { $set: { v: 'journaled' } });
      await client.close();
      await server.stop();

      lines.length = 0;
      server = await start({ dataFile, logger });
      client = await MongoClient.connect(server.uri);
      const c = client.db('db').collection<{ _id: number; v: string }>('c');
      // Written while the copy may still run.
      await c.updateOne({ _id: 10 }, { $set: { v: 'after start' } }, { writeConcern: { j: true } });
      await c.deleteOne({ _id: 5999 });
      const expected = Array.from({ length: 5999 }, (_, i) => ({
        _id: i,
        v: i === 10 ? 'after start' : i >= 3000 ? 'journaled' : `first ${i}`,
      }));
      expect(await c.find().sort({ _id: 1 }).toArray()).toEqual(expected);
      await client.close();
      await server.stop();
      const logged = lines.map((l) => JSON.parse(l) as { msg: string; documents?: number });
      // The copy ran (before the stop at the latest) and copied what was loaded: every document
      // but the two written after the start, if they were written before the copy reached them.
      const done = logged.find((l) => l.msg === 'loaded documents have buffers of their own');
      expect(done?.documents).toBeGreaterThanOrEqual(5998);
      expect(done?.documents).toBeLessThanOrEqual(6000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
