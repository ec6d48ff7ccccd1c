// The data file and its journal: loaded and replayed at start, every change journaled, so data and
// indexes survive a restart with their BSON types. Index and document semantics after reload are MongoDB's
// ("Unique Indexes": https://www.mongodb.com/docs/manual/core/index-unique/ ; "BSON Types":
// https://www.mongodb.com/docs/manual/reference/bson-types/).
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decimal128, Long, MongoClient } from 'mongodb';
import { start } from '../src/index';
import { serverError } from './helpers';

describe('data file persistence', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mongo-server-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function withServer<T>(
    dataFile: string,
    fn: (client: MongoClient) => Promise<T>,
  ): Promise<T> {
    const server = await start({ port: 0, dataFile });
    const client = new MongoClient(server.uri);
    try {
      await client.connect();
      return await fn(client);
    } finally {
      await client.close();
      await server.stop();
    }
  }

  it('when the server restarts on the same data file, then documents, types and unique indexes are back', async () => {
    const file = path.join(dir, 'data.bson');
    await withServer(file, async (client) => {
      const c = client.db('app').collection('users');
      await c.createIndex({ email: 1 }, { unique: true });
      await c.insertMany([
        {
          email: 'a@x',
          big: Long.fromString('9007199254740993'),
          price: Decimal128.fromString('9.99'),
        },
        { email: 'b@x' },
      ]);
      await c.deleteOne({ email: 'b@x' });
    });
    // A clean stop wrote a snapshot of the changes (the journal it covers is gone), and no temp
    // file is left.
    expect(readdirSync(dir)).toEqual(['data.bson']);
    await withServer(file, async (client) => {
      const c = client.db('app').collection('users');
      const doc = await c.findOne({ email: 'a@x' }, { promoteValues: false });
      expect((doc?.['big'] as Long).toString()).toBe('9007199254740993');
      expect(String(doc?.['price'])).toBe('9.99');
      expect(await c.countDocuments()).toBe(1);
      expect((await c.listIndexes().toArray()).map((i) => i['name'])).toEqual(['_id_', 'email_1']);
      expect((await serverError(c.insertOne({ email: 'a@x' }))).code).toBe(11000);
    });
  });

  it('when the data file does not exist yet, then the server starts empty, and a clean stop leaves a snapshot there', async () => {
    const file = path.join(dir, 'nested', 'fresh.bson');
    await withServer(file, async (client) => {
      expect(await client.db('x').collection('y').countDocuments()).toBe(0);
      await client.db('x').collection('y').insertOne({ a: 1 });
    });
    expect(readdirSync(path.dirname(file))).toEqual(['fresh.bson']);
  });

  it('when a write asks for j: true, then it is in the journal once acknowledged (write concern "j"), and replies keep their order', async () => {
    const file = path.join(dir, 'journaled.bson');
    await withServer(file, async (client) => {
      const c = client.db('app').collection('events');
      await c.insertOne({ _id: 'first' } as never, { writeConcern: { j: true } });
      // The journal is written before the acknowledgement: a copy of the files taken now holds it.
      const copy = path.join(dir, 'copy.bson');
      if (existsSync(file)) copyFileSync(file, copy);
      copyFileSync(`${file}.journal.000001`, `${copy}.journal.000001`);
      const reloaded = await start({ port: 0, dataFile: copy });
      const other = new MongoClient(reloaded.uri);
      try {
        expect(
          await other
            .db('app')
            .collection('events')
            .findOne({ _id: 'first' } as never),
        ).toEqual({ _id: 'first' });
      } finally {
        await other.close();
        await reloaded.stop();
      }
      const [a, b] = await Promise.all([
        c.updateOne(
          { _id: 'first' } as never,
          { $set: { n: 1 } },
          { writeConcern: { fsync: true } },
        ),
        c.findOne({ _id: 'first' } as never),
      ]);
      expect(a.modifiedCount).toBe(1);
      expect(b).toEqual({ _id: 'first', n: 1 });
    });
  });

  it('when a collection is dropped before restart, then it stays dropped', async () => {
    const file = path.join(dir, 'drop.bson');
    await withServer(file, async (client) => {
      await client.db('x').collection('keep').insertOne({ a: 1 });
      await client.db('x').collection('gone').insertOne({ a: 1 });
      await client.db('x').collection('gone').drop();
    });
    await withServer(file, async (client) => {
      expect((await client.db('x').listCollections().toArray()).map((c) => c.name)).toEqual([
        'keep',
      ]);
    });
  });

  it('when a damaged data file holds two documents with the same unique key, then the collection answers every command with that error instead of keeping both, and a stop keeps the bytes as they were', async () => {
    const file = path.join(dir, 'data.bson');
    await withServer(file, async (client) => {
      const c = client.db('app').collection('users');
      await c.createIndex({ email: 1 }, { unique: true });
      await c.insertMany([
        { _id: 1, email: 'dup-a@x' } as never,
        { _id: 2, email: 'dup-b@x' } as never,
      ]);
    });
    // The second email made equal to the first, as a damaged (or hand-edited) snapshot could be:
    // the snapshot is not re-checked document by document at start-up, the unique index is.
    const bytes = readFileSync(file);
    const at = bytes.indexOf('dup-b@x');
    expect(at).toBeGreaterThan(0);
    bytes.write('dup-a@x', at);
    writeFileSync(file, bytes);
    // Start-up leaves the collection's load until it is first used (Collection.deferLoad): the
    // damage is found then, or by the load in the background once the server answers.
    for (let run = 0; run < 2; run++) {
      await withServer(file, async (client) => {
        const users = client.db('app').collection('users');
        await expect(users.find({}).toArray()).rejects.toThrow(/E11000.*email_1/);
        await expect(users.insertOne({ _id: 3, email: 'c@x' } as never)).rejects.toThrow(
          /damaged.*E11000.*email_1/,
        );
        await expect(users.countDocuments()).rejects.toThrow(/damaged/);
        // Other collections are served, and written (the stop then writes a snapshot).
        await client.db('app').collection('other').insertOne({ run });
        expect(await client.db('app').collection('other').countDocuments()).toBe(run + 1);
      });
      // The snapshot written by the stop holds the damaged collection as it was read.
      expect(readFileSync(file).toString('latin1').split('dup-a@x').length - 1).toBe(2);
    }
  });

  it('when the journal changes a collection whose data file is damaged, then start-up fails', async () => {
    const file = path.join(dir, 'data.bson');
    await withServer(file, async (client) => {
      const c = client.db('app').collection('users');
      await c.createIndex({ email: 1 }, { unique: true });
      await c.insertMany([
        { _id: 1, email: 'dup-a@x' } as never,
        { _id: 2, email: 'dup-b@x' } as never,
      ]);
    });
    // An update only in the journal: replaying it needs the collection loaded.
    const server = await start({ port: 0, dataFile: file, journal: { snapshotOnStop: false } });
    const client = await MongoClient.connect(server.uri);
    await client
      .db('app')
      .collection('users')
      .updateOne({ _id: 1 as never }, { $set: { seen: true } });
    await client.close();
    await server.stop();
    const bytes = readFileSync(file);
    bytes.write('dup-a@x', bytes.indexOf('dup-b@x'));
    writeFileSync(file, bytes);

    await expect(start({ port: 0, dataFile: file })).rejects.toThrow(/E11000.*email_1/);
  });
});
