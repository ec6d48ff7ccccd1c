// Each spec starts its own server on a free port and talks to it only through the official driver or
// mongoose, never through server internals.
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
