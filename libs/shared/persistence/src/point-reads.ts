import { MongoNetworkError, type Db, type Document, type Filter, type WithId } from 'mongodb';
import type { Connection } from 'mongoose';

/**
 * The connection's database for reads on a hot path: the same client, without the connection's
 * write concern. A read has no use for a write concern, but the driver copies the one it inherits
 * into every operation's options and then deletes it, which turns that options object (read on
 * every step of the operation) into a slow dictionary: about 10 us a findOne
 * (tools/bench/README.md, privacy-api). Reads only: a write through it would not be journaled.
 */
function readDb(connection: Connection): Db {
  return connection
    .getClient()
    .db(connection.db?.databaseName ?? connection.name, { writeConcern: undefined });
}

/** Reads of at most one document, by a filter on a unique key (see `pointReads`). */
export interface PointReads<T extends Document> {
  /** The one document `filter` matches (the first, should it match several), or null. */
  findOne(filter: Filter<T>, options?: { projection?: Document }): Promise<WithId<T> | null>;
}

/**
 * One-document reads on a hot path (privacy's status check and the read before a set) as the
 * `find` command itself, with `limit: 1` and `singleBatch: true`, instead of the driver's
 * `findOne`. The server gets the same command; what is saved is the driver's cursor machinery
 * around it (a cursor object, its initialisation, `next`, its close and their promises): about
 * 35 of 120 us of the client's CPU a read, measured against the project's MongoDB-compatible
 * server (tools/bench/README.md, privacy-api). Written here rather than taken from the driver
 * because the driver has no cursor-less find.
 *
 * What `findOne` would add and this keeps: the primary read preference (`runCommand`'s default,
 * as the collection's here), the client's read concern, the implicit session, the database's BSON
 * options, the command
 * monitoring (and so the command's span), and the retryable read: a read that failed with an
 * error the driver would retry (a network error, a primary stepping down; the driver's list) is
 * sent once more, which selects a server again, as the driver does for `findOne`.
 */
export function pointReads<T extends Document>(
  connection: Connection,
  name: string,
): PointReads<T> {
  let db: Db | undefined;
  // The client's read concern (MONGO_URL's readConcernLevel, say), which findOne would inherit and
  // a command does not: named in the command itself.
  let readConcern: { readConcern?: { level: string } } = {};
  const once = async (filter: Filter<T>, projection: Document | undefined) => {
    if (!db) {
      db = readDb(connection);
      const level = db.readConcern?.level;
      if (level) readConcern = { readConcern: { level } };
    }
    const reply = await db.command({
      find: name,
      filter,
      ...(projection ? { projection } : {}),
      limit: 1,
      singleBatch: true,
      batchSize: 1,
      ...readConcern,
    });
    const first = (reply['cursor'] as { firstBatch?: Document[] } | undefined)?.firstBatch?.[0];
    return (first as WithId<T> | undefined) ?? null;
  };
  return {
    async findOne(filter, options) {
      try {
        return await once(filter, options?.projection);
      } catch (err) {
        if (!retryableRead(err)) throw err;
        return once(filter, options?.projection);
      }
    },
  };
}

/**
 * The server error codes after which the driver retries a read (its RETRYABLE_READ_ERROR_CODES,
 * which it does not export): HostUnreachable, HostNotFound, NetworkTimeout, ShutdownInProgress,
 * ReadConcernMajorityNotAvailableYet, PrimarySteppedDown, ExceededTimeLimit, SocketException,
 * NotWritablePrimary, InterruptedAtShutdown, InterruptedDueToReplStateChange,
 * NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary.
 */
const RETRYABLE_READ_CODES = new Set<number>([
  6, 7, 89, 91, 134, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436,
]);

/** Whether the driver would retry a read that failed with `err` (its isRetryableReadError). */
export function retryableRead(err: unknown): boolean {
  if (err instanceof MongoNetworkError) return true;
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'number' && RETRYABLE_READ_CODES.has(code)) return true;
  return typeof message === 'string' && /not master|node is recovering/i.test(message);
}
