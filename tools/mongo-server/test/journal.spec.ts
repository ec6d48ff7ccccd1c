// The journal beside the data file: every kind of change is replayed into the same state, a torn
// tail (a crash mid-append) is cut off, damage in the middle is refused by file and offset, and
// writes with j: true share fsyncs (group commit). MongoDB's semantics: "Journaling"
// (https://www.mongodb.com/docs/manual/core/journaling/) and "Write Concern" j/fsync
// (https://www.mongodb.com/docs/manual/reference/write-concern/).
import { serialize } from 'bson';
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Int32, MongoClient } from 'mongodb';
import pino from 'pino';
import { start, type RunningMongoServer } from '../src/index';
import { dump, serverError } from './helpers';

const J = { writeConcern: { j: true } };

function capturingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n'))
        if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('journal', () => {
  let dir: string;
  let file: string;
  const opened: Array<{ server: RunningMongoServer; client: MongoClient }> = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mongo-journal-'));
    file = path.join(dir, 'data.bson');
  });
  afterEach(async () => {
    for (const o of opened.splice(0)) {
      await o.client.close();
      await o.server.stop();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(
    options: Partial<Parameters<typeof start>[0]> = {},
  ): Promise<{ server: RunningMongoServer; client: MongoClient }> {
    // A stop leaves the journal as a crash would: these tests are about replaying it.
    const server = await start({
      port: 0,
      dataFile: file,
      ...options,
      journal: { snapshotOnStop: false, ...options.journal },
    });
    const client = new MongoClient(server.uri);
    await client.connect();
    const o = { server, client };
    opened.push(o);
    return o;
  }

  async function close(o: { server: RunningMongoServer; client: MongoClient }): Promise<void> {
    opened.splice(opened.indexOf(o), 1);
    await o.client.close();
    await o.server.stop();
  }

  const segment = (n = 1): string => `${file}.journal.${String(n).padStart(6, '0')}`;

  it('when every kind of change was journaled, then a restart replays them into the same state', async () => {
    const first = await open({ ttlMonitorIntervalMs: 50 });
    const db = first.client.db('app');
    await db.createCollection('explicit');
    const items = db.collection('items');
    await items.createIndex({ sku: 1 }, { unique: true });
    await items.createIndex(
      { price: -1 },
      { name: 'cheap', partialFilterExpression: { price: { $lt: 10 } } },
    );
    await items.createIndex({ tmp: 1 });
    await items.insertMany(
      [
        { _id: 1, sku: 'a', price: new Int32(5) },
        { _id: 2, sku: 'b', price: 12.5 },
        { _id: 3, sku: 'c', price: 7 },
      ] as never[],
      J,
    );
    // An ordered batch that stops at a duplicate: the documents before it stay.
    await serverError(
      items.insertMany(
        [
          { _id: 4, sku: 'd' },
          { _id: 5, sku: 'a' },
          { _id: 6, sku: 'f' },
        ] as never[],
        J,
      ),
    );
    await items.updateOne(
      { _id: 1 } as never,
      { $set: { price: 6 }, $push: { tags: 'x' } } as never,
      J,
    );
    await items.replaceOne({ _id: 2 } as never, { sku: 'b', price: 3, replaced: true }, J);
    await items.findOneAndUpdate({ _id: 3 } as never, { $inc: { price: 1 } }, J);
    await items.updateOne(
      { _id: 9 } as never,
      { $setOnInsert: { sku: 'up' } },
      { upsert: true, ...J },
    );
    await items.deleteOne({ _id: 4 } as never, J);
    await items.dropIndex('tmp_1', J);
    const sessions = db.collection('sessions');
    await sessions.createIndex({ at: 1 }, { expireAfterSeconds: 0 });
    await sessions.insertMany([
      { _id: 'old', at: new Date(0) },
      { _id: 'new', at: 'not a date' },
    ] as never[]);
    // The TTL monitor removes the expired one (a delete like any other, journaled by the same path).
    while ((await sessions.countDocuments()) > 1) await new Promise((r) => setTimeout(r, 20));
    await db.collection('gone').insertOne({ a: 1 }, J);
    await db.collection('gone').drop(J);
    await first.client.db('scratch').collection('c').insertOne({ a: 1 }, J);
    await first.client.db('scratch').dropDatabase(J);
    const before = await dump(first.client);
    await close(first);
    // Nothing but the journal holds this state: stop writes no snapshot.
    expect(readdirSync(dir)).toEqual([path.basename(segment())]);

    const second = await open();
    expect(await dump(second.client)).toBe(before);
    // Restored indexes still work: the unique one refuses, the TTL one is intact.
    expect(
      (await serverError(second.client.db('app').collection('items').insertOne({ sku: 'b' }))).code,
    ).toBe(11000);
    expect(
      (await second.client.db('app').collection('sessions').listIndexes().toArray()).find(
        (i) => i['name'] === 'at_1',
      )?.['expireAfterSeconds'],
    ).toBe(0);
  });

  it('when the journal ends in half a record or garbage (a crash mid-append), then the server starts with every complete record, cuts the tail and says so', async () => {
    const first = await open();
    const c = first.client.db('app').collection('docs');
    for (let i = 0; i < 20; i++) await c.insertOne({ _id: i, text: `doc ${i}` } as never, J);
    let expected = await dump(first.client);
    await close(first);
    // The first 20 bytes of a real record: its frame header is intact and promises more.
    const halfRecord = readFileSync(segment()).subarray(0, 20);
    for (const tail of [halfRecord, Buffer.from('garbage that is not a record at all')]) {
      const good = statSync(segment()).size;
      appendFileSync(segment(), tail);
      const { logger, lines } = capturingLogger();
      const second = await open({ logger });
      expect(await dump(second.client)).toBe(expected);
      const warning = lines.find((l) => String(l['msg']).includes('torn record'));
      expect(warning).toMatchObject({ journal: segment(), offset: good, bytesCut: tail.length });
      expect(statSync(segment()).size).toBe(good);
      // Appends go after the last good record, so the next start sees them too.
      await second.client
        .db('app')
        .collection('docs')
        .insertOne({ _id: `after-${tail.length}`, text: 'later' } as never, J);
      expected = await dump(second.client);
      await close(second);
      const third = await open();
      expect(await dump(third.client)).toBe(expected);
      await close(third);
    }
  });

  it('when a record in the middle of the journal is damaged, then the server refuses to start and names the file and offset', async () => {
    const first = await open();
    const c = first.client.db('app').collection('docs');
    for (let i = 0; i < 10; i++) await c.insertOne({ _id: i, text: `doc ${i}` } as never, J);
    await close(first);
    const bytes = readFileSync(segment());
    const at = bytes.length >> 1;
    bytes[at] = (bytes[at] as number) ^ 0xff;
    writeFileSync(segment(), bytes);
    const error = await start({ port: 0, dataFile: file }).then(
      () => new Error('started'),
      (err: Error) => err,
    );
    expect(error.message).toContain(segment());
    expect(error.message).toMatch(/at offset \d+ followed by good records/);
  });

  it('when many clients write with j: true at once, then they share fsyncs (group commit), and each write is in the journal when acknowledged', async () => {
    const { server } = await open();
    const clients = await Promise.all(
      Array.from({ length: 16 }, () => new MongoClient(server.uri, { maxPoolSize: 1 }).connect()),
    );
    try {
      const fsyncsBefore = server.persistence?.stats().fsyncs ?? 0;
      const PER_CLIENT = 20;
      await Promise.all(
        clients.map(async (client, k) => {
          const c = client.db('app').collection('burst');
          for (let i = 0; i < PER_CLIENT; i++)
            await c.insertOne({ _id: `${k}-${i}`, k, i } as never, J);
        }),
      );
      const writes = clients.length * PER_CLIENT;
      const fsyncs = (server.persistence?.stats().fsyncs ?? 0) - fsyncsBefore;
      expect(fsyncs).toBeGreaterThan(0);
      expect(fsyncs).toBeLessThan(writes / 3);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('when writes do not ask for j, then they are acknowledged at once and reach the journal on their own (commit interval)', async () => {
    const first = await open();
    const c = first.client.db('app').collection('lazy');
    const stats = (): { records: number; durableRecords: number; fsyncs: number } =>
      first.server.persistence?.stats() as never;
    const fsyncsBefore = stats().fsyncs;
    for (let i = 0; i < 50; i++) await c.insertOne({ _id: i } as never);
    // No write waited for the disk, so they cannot each have had their own fsync...
    expect(stats().fsyncs - fsyncsBefore).toBeLessThan(50);
    // ...yet all of them get there without anyone asking.
    while (stats().durableRecords < stats().records) await new Promise((r) => setTimeout(r, 20));
    // Reading the files now (without a clean stop) gives every write.
    const copy = path.join(dir, 'copy.bson');
    writeFileSync(`${copy}.journal.000001`, readFileSync(segment()));
    const reader = await start({ port: 0, dataFile: copy });
    const client = new MongoClient(reader.uri);
    try {
      expect(await client.db('app').collection('lazy').countDocuments()).toBe(50);
    } finally {
      await client.close();
      await reader.stop();
    }
  });

  it('when the data file is a version 1 snapshot (written before the journal), then it loads, and changes are journaled beside it', async () => {
    const v1 = Buffer.concat([
      serialize({ format: 'nhp-mongo-server-snapshot', version: 1, writtenAt: new Date() }),
      serialize({
        db: 'old',
        collection: 'users',
        options: {},
        indexes: [{ v: 2, key: { email: 1 }, name: 'email_1', unique: true }],
        count: 2,
      }),
      serialize({ _id: 1, email: 'a@x', n: new Int32(1) }),
      serialize({ _id: 2, email: 'b@x', n: 2.5 }),
    ]);
    writeFileSync(file, v1);
    const first = await open();
    const users = first.client.db('old').collection('users');
    expect(await users.find({}, { promoteValues: false }).toArray()).toEqual([
      { _id: new Int32(1), email: 'a@x', n: new Int32(1) },
      { _id: new Int32(2), email: 'b@x', n: expect.objectContaining({ value: 2.5 }) },
    ]);
    expect((await serverError(users.insertOne({ email: 'a@x' }))).code).toBe(11000);
    await users.insertOne({ _id: 3, email: 'c@x' } as never, J);
    const before = await dump(first.client);
    await close(first);
    expect(readFileSync(file).equals(v1)).toBe(true);
    const second = await open();
    expect(await dump(second.client)).toBe(before);
  });
});
