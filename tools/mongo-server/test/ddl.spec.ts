// Collections, databases and indexes. Expected behaviour from the MongoDB manual:
// - "create" (NamespaceExists 48 for an existing collection): https://www.mongodb.com/docs/manual/reference/command/create/
// - "drop" ("Starting in MongoDB 7.0, drop ... on a non-existent collection ... returns ok: 1"):
//   https://www.mongodb.com/docs/manual/reference/command/drop/
// - "dropDatabase", "listCollections", "listDatabases":
//   https://www.mongodb.com/docs/manual/reference/command/dropDatabase/ , .../listCollections/ , .../listDatabases/
// - "createIndexes", "listIndexes", "dropIndexes" (cannot drop _id_; IndexNotFound 27):
//   https://www.mongodb.com/docs/manual/reference/command/createIndexes/ , .../listIndexes/ , .../dropIndexes/
// - "TTL Indexes": https://www.mongodb.com/docs/manual/core/index-ttl/
import { MongoClient } from 'mongodb';
import { start } from '../src/index';
import { serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('collections, databases and indexes', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when a collection is created twice, then the second create fails with NamespaceExists (48)', async () => {
    await h.db.createCollection('things');
    const err = await serverError(h.db.command({ create: 'things' }));
    expect(err.code).toBe(48);
  });

  it('when collections exist, then listCollections names them and filters by name', async () => {
    await h.db.createCollection('a');
    await h.db.collection('b').insertOne({ x: 1 });
    const all = await h.db.listCollections().toArray();
    expect(all.map((c) => c.name).sort()).toEqual(['a', 'b']);
    expect(all[0]).toMatchObject({ type: 'collection', options: {} });
    const only = await h.db.listCollections({ name: 'b' }, { nameOnly: true }).toArray();
    expect(only).toEqual([{ name: 'b', type: 'collection' }]);
  });

  it('when collections and databases are dropped, then they disappear from the listings', async () => {
    await h.db.collection('a').insertOne({ x: 1 });
    await h.client.db('other').collection('z').insertOne({ y: 1 });
    const dbs = await h.client.db('admin').admin().listDatabases();
    expect(dbs.databases.map((d) => d.name).sort()).toEqual(['other', 'test']);
    expect(await h.db.collection('a').drop()).toBe(true);
    // Since 7.0 dropping a missing collection succeeds.
    expect((await h.db.command({ drop: 'missing' }))['ok']).toBe(1);
    expect(await h.db.listCollections().toArray()).toEqual([]);
    expect(await h.client.db('other').dropDatabase()).toBe(true);
    const after = await h.client.db('admin').admin().listDatabases({ nameOnly: true });
    expect(after.databases).toEqual([]);
  });

  it('when indexes are created, listed and dropped, then listIndexes follows and _id_ cannot be dropped', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.createIndex({ a: 1, b: -1 }, { name: 'ab', sparse: true });
    const specs = await c.listIndexes().toArray();
    expect(specs).toEqual([
      { v: 2, key: { _id: 1 }, name: '_id_' },
      { v: 2, key: { email: 1 }, name: 'email_1', unique: true },
      { v: 2, key: { a: 1, b: -1 }, name: 'ab', sparse: true },
    ]);
    await c.dropIndex('ab');
    expect((await c.listIndexes().toArray()).map((i) => i['name'])).toEqual(['_id_', 'email_1']);
    expect((await serverError(c.dropIndex('_id_'))).code).toBe(72);
    expect((await serverError(c.dropIndex('nope'))).code).toBe(27);
    await c.dropIndexes();
    expect((await c.listIndexes().toArray()).map((i) => i['name'])).toEqual(['_id_']);
  });

  it('when an index name is reused for another key, then createIndexes fails with IndexKeySpecsConflict (86)', async () => {
    const c = h.db.collection('c');
    await c.createIndex({ a: 1 }, { name: 'x' });
    expect((await serverError(c.createIndex({ b: 1 }, { name: 'x' }))).code).toBe(86);
    // The same index again is a no-op.
    expect(await c.createIndex({ a: 1 }, { name: 'x' })).toBe('x');
  });

  it('when an index type is not supported (text, hashed), then createIndexes refuses it', async () => {
    const c = h.db.collection('c');
    expect((await serverError(c.createIndex({ body: 'text' }))).code).toBe(67);
    expect((await serverError(c.createIndex({ k: 'hashed' }))).code).toBe(67);
  });

  it('when listIndexes names a missing collection, then NamespaceNotFound (26) is returned', async () => {
    expect((await serverError(h.db.collection('missing').listIndexes().toArray())).code).toBe(26);
  });

  it('when a TTL index exists, then listIndexes shows expireAfterSeconds', async () => {
    const c = h.db.collection('sessions');
    await c.createIndex({ at: 1 }, { expireAfterSeconds: 3600 });
    const specs = await c.listIndexes().toArray();
    expect(specs[1]).toEqual({ v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 3600 });
  });

  it('when an update matches nothing and does not upsert, then no collection is created', async () => {
    await h.db.collection('ghost').updateOne({ a: 1 }, { $set: { b: 1 } });
    expect(await h.db.listCollections().toArray()).toEqual([]);
  });
});

describe('TTL indexes', () => {
  it('when a document whose indexed date is older than expireAfterSeconds exists, then the TTL monitor removes it', async () => {
    // "TTL Indexes": documents expire after expireAfterSeconds past the indexed date; documents whose
    // field is not a date (or is missing) never expire. The monitor runs more often here than mongod's 60 s.
    const server = await start({ port: 0, ttlMonitorIntervalMs: 20 });
    const client = new MongoClient(server.uri);
    try {
      await client.connect();
      const c = client.db('test').collection('sessions');
      await c.createIndex({ at: 1 }, { expireAfterSeconds: 60 });
      await c.insertMany([
        { name: 'old', at: new Date(Date.now() - 3600_000) },
        { name: 'fresh', at: new Date(Date.now() + 3600_000) },
        { name: 'no-date', at: 'yesterday' },
        { name: 'missing' },
      ]);
      while ((await c.countDocuments({ name: 'old' })) > 0)
        await new Promise((r) => setTimeout(r, 20));
      expect((await c.find({}, { sort: { name: 1 } }).toArray()).map((d) => d['name'])).toEqual([
        'fresh',
        'missing',
        'no-date',
      ]);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
