import { context, SpanKind, type Context } from '@opentelemetry/api';
import { errorType, inRootContext, recordSpan, sampledContext } from '@nhp/shared-tracing';
import { MongoNetworkError, type Db, type Document, type Filter, type WithId } from 'mongodb';
import type { Connection } from 'mongoose';
import { commandSpanAttributes, commandSpanName } from './command-spans';
import { perTurn } from './per-turn';

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

export interface PointReadsOptions {
  /**
   * The fields of a unique index of the collection. A read whose filter is exactly these fields,
   * each equal to a string or a number, is then coalesced with the other such reads asked for in
   * the same turn of the event loop: they go out as one `find` of the `$or` of their filters, and
   * each gets the document of its key (see `pointReads`). Without it, every read is its own find.
   */
  coalesceOn?: readonly string[];
}

/** Reads coalesced into one command at most (a find's `$or` of as many equality branches). */
const MAX_COALESCED = 100;

interface Waiting<T> {
  filter: Filter<T>;
  key: string;
  resolve(doc: WithId<T> | null): void;
  reject(err: unknown): void;
  /** The read's context when it is under a sampled span (tracing on): its command gets a span. */
  traced: Context | undefined;
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
 * options, the command monitoring (and so the command's span), and the retryable read: a read that failed with an
 * error the driver would retry (a network error, a primary stepping down; the driver's list) is
 * sent once more, which selects a server again, as the driver does for `findOne`.
 *
 * With `coalesceOn` (a unique key), reads by that key asked for in one turn of the event loop
 * (the requests a busy server reads from its sockets at once) share one command: a `find` of the
 * `$or` of their filters (each an equality on the unique index, so each branch is an index
 * lookup), sent after the turn's I/O callbacks (`setImmediate`, as shared-outbox's batched writes),
 * and each read gets the document of its key or null. What each read pays of the driver (server
 * selection, a pooled connection, the session, the command's serialisation and promises) is then
 * paid once per turn: under the status-check benchmark most of what privacy-api spends in the
 * driver (tools/bench/README.md). A lone read goes out exactly as without it, and so does a read
 * that cannot be coalesced (a filter of other fields or with operators, a projection that leaves
 * out a key field). With tracing on, the shared command runs in no request's context (the driver
 * makes no span of it), and each read under a sampled span gets a CLIENT span of its own for it,
 * in its trace, with `db.operation.batch.size`; a lone sampled read keeps the driver's span. A
 * failure of the shared command (after its one retry) fails each of its reads with that error.
 */
export function pointReads<T extends Document>(
  connection: Connection,
  name: string,
  options: PointReadsOptions = {},
): PointReads<T> {
  let db: Db | undefined;
  // The client's read concern (MONGO_URL's readConcernLevel, say), which findOne would inherit and
  // a command does not: named in the command itself.
  let readConcern: { readConcern?: { level: string } } = {};
  const database = (): Db => {
    if (!db) {
      db = readDb(connection);
      const level = db.readConcern?.level;
      if (level) readConcern = { readConcern: { level } };
    }
    return db;
  };
  const find = async (
    filter: Document,
    projection: Document | undefined,
    limit: number,
  ): Promise<Document[]> => {
    const reply = await database().command({
      find: name,
      filter,
      ...(projection ? { projection } : {}),
      limit,
      singleBatch: true,
      batchSize: limit,
      ...readConcern,
    });
    return (reply['cursor'] as { firstBatch?: Document[] } | undefined)?.firstBatch ?? [];
  };
  const withRetry = async <R>(operation: () => Promise<R>): Promise<R> => {
    try {
      return await operation();
    } catch (err) {
      if (!retryableRead(err)) throw err;
      return operation();
    }
  };
  const single = (filter: Filter<T>, projection: Document | undefined) =>
    withRetry(
      async () => ((await find(filter, projection, 1))[0] as WithId<T> | undefined) ?? null,
    );

  const keyFields = options.coalesceOn;
  if (!keyFields || keyFields.length === 0) {
    return { findOne: (filter, opts) => single(filter, opts?.projection) };
  }

  /** The key of a value tuple of the key fields; undefined unless each is a string or a number. */
  const keyOf = (doc: Document): string | undefined => {
    let key = '';
    for (const field of keyFields) {
      const value: unknown = doc[field];
      if (typeof value === 'string') key += `s${value.length}:${value}`;
      else if (typeof value === 'number') key += `n${value}:`;
      else return undefined;
    }
    return key;
  };
  const keyFieldSet = new Set(keyFields);
  /** Whether a filter is exactly the key fields, each by a plain value: then its key. */
  const filterKey = (filter: Document): string | undefined => {
    let count = 0;
    for (const field in filter) {
      if (!keyFieldSet.has(field)) return undefined;
      count++;
    }
    return count === keyFields.length ? keyOf(filter) : undefined;
  };
  // Whether a projection keeps every key field (needed to tell the documents apart), per object:
  // callers pass constants.
  const keepsKeys = new WeakMap<Document, boolean>();
  const projectionKeepsKeys = (projection: Document | undefined): boolean => {
    if (!projection) return true;
    let known = keepsKeys.get(projection);
    if (known === undefined) {
      const values = Object.entries(projection).filter(([field]) => field !== '_id');
      const inclusion = values.some(([, v]) => v === 1 || v === true);
      known = keyFields.every((field) =>
        inclusion
          ? projection[field] === 1 || projection[field] === true
          : projection[field] === undefined,
      );
      keepsKeys.set(projection, known);
    }
    return known;
  };

  const send = async (projection: Document | undefined, batch: Array<Waiting<T>>) => {
    if (batch.length === 1) {
      // Alone: the plain read, in its own context (so a sampled one gets the driver's span).
      const [only] = batch as [Waiting<T>];
      const read = () => single(only.filter, projection);
      (only.traced ? context.with(only.traced, read) : read()).then(only.resolve, only.reject);
      return;
    }
    const filters = new Map<string, Filter<T>>();
    for (const read of batch) filters.set(read.key, read.filter);
    // The shared command runs in no request's context, so the driver makes no span of it: each
    // sampled read gets one of its own in its trace, for the command that answered it, recorded
    // when the command returns and made by the tracer with others (shared-tracing's recordSpan).
    const fields = {
      databaseName: database().databaseName,
      commandName: 'find',
      collection: name,
      batchSize: filters.size,
    };
    const traced: Context[] = [];
    for (const read of batch) if (read.traced) traced.push(read.traced);
    const startTime = traced.length > 0 ? performance.now() : 0;
    const spansOf = (err: unknown) => {
      if (traced.length === 0) return;
      const endTime = performance.now();
      const spanName = commandSpanName(fields);
      const attributes = commandSpanAttributes(fields);
      for (const parent of traced) {
        recordSpan({
          name: spanName,
          kind: SpanKind.CLIENT,
          attributes,
          parent,
          startTime,
          endTime,
          ...(err === undefined ? {} : { error: errorType(err) }),
        });
      }
    };
    try {
      const docs = await withRetry(() =>
        find({ $or: [...filters.values()] }, projection, filters.size),
      );
      spansOf(undefined);
      const byKey = new Map<string, WithId<T>>();
      for (const doc of docs) {
        const key = keyOf(doc);
        if (key !== undefined && !byKey.has(key)) byKey.set(key, doc as WithId<T>);
      }
      for (const read of batch) read.resolve(byKey.get(read.key) ?? null);
    } catch (err) {
      spansOf(err);
      for (const read of batch) read.reject(err);
    }
  };
  // The reads of a turn, by projection (callers pass constants); the shared command runs in no
  // request's context (see send).
  const turn = perTurn<Document | undefined, Waiting<T>>(
    (projection, reads) => void send(projection, reads),
    {
      max: MAX_COALESCED,
      wrap: inRootContext,
    },
  );

  return {
    findOne(filter, opts) {
      const projection = opts?.projection;
      const key = filterKey(filter as Document);
      if (key === undefined || !projectionKeepsKeys(projection)) return single(filter, projection);
      const traced = sampledContext();
      return new Promise<WithId<T> | null>((resolve, reject) => {
        turn.add(projection, { filter, key, resolve, reject, traced });
      });
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
