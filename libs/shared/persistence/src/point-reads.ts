import { context, type Context, type Span } from '@opentelemetry/api';
import { failSpan, inRootContext, sampledContext } from '@nhp/shared-tracing';
import type { Collection, Document, Filter, WithId } from 'mongodb';
import type { Connection } from 'mongoose';
import { startCommandSpan } from './command-spans';
import { perTurn } from './per-turn';

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
 * One-document reads on a hot path (privacy's status check and the read before a set), through the
 * driver's own `findOne` and `find` on the connection's client: its read preference, read concern,
 * session, BSON options, command monitoring (and so the command's span) and retryable reads.
 *
 * With `coalesceOn` (a unique key), reads by that key asked for in one turn of the event loop
 * (the requests a busy server reads from its sockets at once) share one command: a `find` of the
 * `$or` of their filters (each an equality on the unique index, so each branch is an index
 * lookup), sent after the turn's I/O callbacks (`setImmediate`, as shared-outbox's batched writes),
 * and each read gets the document of its key or null. Why: what each read pays of the driver
 * (server selection, a pooled connection, the session, the cursor, the command's serialisation and
 * promises) is then paid once per turn, and under load that is most of what a status check spends
 * in the driver (tools/bench/README.md, privacy-api). A lone read goes out as a plain `findOne`,
 * and so does a read that cannot be coalesced (a filter of other fields or with operators, a
 * projection that leaves out a key field). With tracing on, the shared command runs in no request's
 * context (the driver's monitoring makes no span of it), and each read under a sampled span gets a
 * CLIENT span of its own for it, in its trace, with `db.operation.batch.size`; a lone sampled read
 * keeps the driver's span. A failure of the shared command (after the driver's one retry) fails
 * each of its reads with that error.
 */
export function pointReads<T extends Document>(
  connection: Connection,
  name: string,
  options: PointReadsOptions = {},
): PointReads<T> {
  let collection: Collection<T> | undefined;
  // The driver's collection on the connection's client (mongoose's own wraps it with buffering,
  // which a connection made with bufferCommands: false does not use).
  const native = (): Collection<T> =>
    (collection ??= connection
      .getClient()
      .db(connection.db?.databaseName ?? connection.name)
      .collection<T>(name));
  const single = (filter: Filter<T>, projection: Document | undefined) =>
    native().findOne(filter, projection ? { projection } : {});

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
    // sampled read gets one of its own in its trace, for the command that answered it.
    const spans: Span[] = [];
    for (const read of batch) {
      if (!read.traced) continue;
      spans.push(
        startCommandSpan(
          {
            databaseName: native().dbName,
            commandName: 'find',
            collection: name,
            batchSize: filters.size,
          },
          read.traced,
        ),
      );
    }
    try {
      const docs = await native()
        .find({ $or: [...filters.values()] } as Filter<T>, {
          ...(projection ? { projection } : {}),
          limit: filters.size,
          singleBatch: true,
        })
        .toArray();
      for (const span of spans) span.end();
      const byKey = new Map<string, WithId<T>>();
      for (const doc of docs) {
        const key = keyOf(doc);
        if (key !== undefined && !byKey.has(key)) byKey.set(key, doc);
      }
      for (const read of batch) read.resolve(byKey.get(read.key) ?? null);
    } catch (err) {
      for (const span of spans) {
        failSpan(span, err);
        span.end();
      }
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
