// Each spec starts its own server on a free port and talks to it only through the official driver or
// mongoose, never through server internals.
import { EJSON } from 'bson';
import { Long, MongoClient, MongoServerError, type Db } from 'mongodb';
import { start, type RunningMongoServer } from '../src/index';

export interface DriverHarness {
  server: RunningMongoServer;
  client: MongoClient;
  db: Db;
}

export async function startWithDriver(dbName = 'test'): Promise<DriverHarness> {
  const server = await start({ port: 0 });
  const client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  return { server, client, db: client.db(dbName) };
}

export async function stopHarness(h: DriverHarness | undefined): Promise<void> {
  if (!h) return;
  await h.client.close();
  await h.server.stop();
}

/** The server error a promise rejects with (fails the test if it resolves). */
export async function serverError(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MongoServerError) return err;
    throw err;
  }
  throw new Error('expected a MongoServerError, but the operation succeeded');
}

/**
 * The cursor id of a command reply as a Long. The driver hands an int64 that fits in 53 bits back
 * as a number (promoteLongs), and a number sent back would go out as a double, which getMore
 * rightly refuses; cursor ids are random, so that happens now and then.
 */
export function cursorId(reply: { cursor?: { id?: unknown } }): Long {
  return Long.fromValue(reply.cursor?.id as Long | number);
}

/**
 * Everything a client can see of the server's data, as canonical Extended JSON (so BSON types and
 * field order count): per collection its options, its indexes and its documents in natural order.
 */
export async function dump(client: MongoClient): Promise<string> {
  const out: Record<string, unknown> = {};
  const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
  for (const dbName of databases.map((d) => d.name).sort()) {
    const db = client.db(dbName);
    const collections = await db.listCollections().toArray();
    for (const name of collections.map((c) => c.name).sort()) {
      const coll = db.collection(name);
      const info = collections.find((c) => c.name === name);
      out[`${dbName}.${name}`] = {
        options: info && 'options' in info ? info.options : undefined,
        indexes: await coll.listIndexes().toArray(),
        documents: await coll.find({}, { promoteValues: false, promoteBuffers: false }).toArray(),
      };
    }
  }
  return EJSON.stringify(out, { relaxed: false });
}
