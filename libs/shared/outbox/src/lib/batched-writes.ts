import {
  MongoBulkWriteError,
  MongoServerError,
  type AnyBulkWriteOperation,
  type Collection,
  type Document,
  type WriteConcernSettings,
} from 'mongodb';
import type { Connection } from 'mongoose';
import { context, type Context, type Span } from '@opentelemetry/api';
import { perTurn, startCommandSpan } from '@nhp/shared-persistence';
import { failSpan, inRootContext, sampledContext } from '@nhp/shared-tracing';

/**
 * Small writes of many concurrent requests (an outbox's pointers, the relay's sink and settle) sent
 * together: every write asked for in one turn of the event loop goes to its collection in one
 * unordered `bulkWrite` command, under the connection's write concern (the journaled one), and each
 * caller's promise settles with its own statement. Under load a command carries the writes of
 * every request that reached the same step, so the client and the server pay one command's
 * overhead (and one journal commit) for them all; when idle a command carries one write, sent in
 * the same turn as before.
 */
export interface BatchedWrites {
  /**
   * Resolves once the command that carries `op` was acknowledged with the write concern; rejects
   * with the statement's own write error (a MongoServerError with its code, e.g. a duplicate key)
   * or the command's failure.
   */
  write<T extends Document = Document>(
    collection: string,
    op: AnyBulkWriteOperation<T>,
  ): Promise<void>;
}

interface Queued {
  op: AnyBulkWriteOperation<Document>;
  resolve: () => void;
  reject: (err: unknown) => void;
  /** The context of a sampled caller (tracing on), whose trace gets a span of the command. */
  traced: Context | undefined;
}

export interface BatchedWritesOptions {
  /**
   * `false`: acknowledged without waiting for the journal (the connection's `w` kept, `j: false`).
   * Only for a write that a later journaled write on the same deployment makes durable: MongoDB's
   * journal (and every member's oplog) is one ordered log, so once a later write is acknowledged
   * with `j: true`, everything acknowledged before it is on disk too. An outbox pointer is such a
   * write (`createJournal`): the change that follows it is journaled, and a pointer lost in a crash
   * before that change was acknowledged points at a write that was not acknowledged either. Not on
   * a sharded cluster, where two collections' writes can go to two shards' journals.
   * Default: the connection's write concern (journaled).
   */
  journal?: false;
}

/** Statements per command at most; more wait for the next command of the same turn. */
const MAX_BATCH = 1000;

/**
 * No linger beyond the turn: a sweep relays its documents one after the other, so a wait for
 * other changes' writes would be paid per document (tried at 5 and 20 ms: a NATS outage's backlog
 * then took minutes; libs/shared/outbox/README.md).
 */
export function batchedWrites(
  connection: Connection,
  options: BatchedWritesOptions = {},
): BatchedWrites {
  // With `journal: false`, every command's write concern: the connection's `w` (and wtimeoutMS)
  // without the journal, read from its database once it has one and kept. Otherwise none: each
  // command inherits the connection's.
  let unjournaled: { writeConcern: WriteConcernSettings } | undefined;
  const concernOf = (): { writeConcern?: WriteConcernSettings } => {
    if (options.journal !== false) return {};
    if (unjournaled) return unjournaled;
    const inherited = connection.db?.writeConcern;
    const concern = {
      writeConcern: {
        ...(inherited?.w !== undefined ? { w: inherited.w } : {}),
        ...(inherited?.wtimeoutMS !== undefined ? { wtimeoutMS: inherited.wtimeoutMS } : {}),
        journal: false,
      },
    };
    if (connection.db) unjournaled = concern;
    return concern;
  };

  async function send(collection: string, batch: Queued[]): Promise<void> {
    const target = connection.collection<Document>(collection);
    const concern = concernOf();
    const [only] = batch;
    if (batch.length === 1 && only) {
      // Alone: the driver's plain command for the statement costs less than its bulk machinery;
      // in its caller's context, so that a sampled one gets the driver's span.
      const write = () => single(target, only.op, concern);
      try {
        await (only.traced ? context.with(only.traced, write) : write());
        only.resolve();
      } catch (err) {
        only.reject(err);
      }
      return;
    }
    // The shared command runs in no caller's context, so the driver makes no span of it: each
    // sampled caller gets one of its own, in its trace, for the command that carried its statement.
    const spans = commandSpans(connection.db?.databaseName ?? connection.name, collection, batch);
    try {
      await target.bulkWrite(
        batch.map((q) => q.op),
        { ordered: false, ...concern },
      );
      for (const span of spans.values()) span.end();
      for (const q of batch) q.resolve();
    } catch (err) {
      const failed = statementErrors(err);
      if (!failed) {
        for (const span of spans.values()) endFailed(span, err);
        for (const q of batch) q.reject(err);
        return;
      }
      batch.forEach((q, i) => {
        const own = failed.get(i);
        const span = spans.get(q);
        if (own) {
          if (span) endFailed(span, own);
          q.reject(own);
        } else {
          span?.end();
          q.resolve();
        }
      });
    }
  }

  // The statements of a turn, by collection; the shared command runs in no caller's context (see
  // send).
  const turn = perTurn<string, Queued>((collection, batch) => void send(collection, batch), {
    max: MAX_BATCH,
    wrap: inRootContext,
  });

  return {
    write(collection, op) {
      const traced = sampledContext();
      return new Promise<void>((resolve, reject) => {
        turn.add(collection, {
          op: op as AnyBulkWriteOperation<Document>,
          resolve,
          reject,
          traced,
        });
      });
    },
  };
}

/**
 * A CLIENT span for each sampled caller of a shared bulk write, named for the command that carried
 * its statement (the driver sends one `insert`, `update` or `delete` per kind of statement), with
 * the number of statements that command carried.
 */
function commandSpans(
  databaseName: string,
  collection: string,
  batch: Queued[],
): Map<Queued, Span> {
  const spans = new Map<Queued, Span>();
  if (!batch.some((q) => q.traced)) return spans;
  const counts = new Map<string, number>();
  for (const q of batch) {
    const name = commandOf(q.op);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  for (const q of batch) {
    if (!q.traced) continue;
    const commandName = commandOf(q.op);
    const fields = {
      databaseName,
      commandName,
      collection,
      batchSize: counts.get(commandName) ?? 1,
    };
    spans.set(q, startCommandSpan(fields, q.traced));
  }
  return spans;
}

/** The command the driver sends a bulk write's statement in. */
function commandOf(op: AnyBulkWriteOperation<Document>): 'insert' | 'update' | 'delete' {
  if ('insertOne' in op) return 'insert';
  if ('deleteOne' in op || 'deleteMany' in op) return 'delete';
  return 'update';
}

function endFailed(span: Span, err: unknown): void {
  failSpan(span, err);
  span.end();
}

/** One statement as the driver's own single-document command. */
async function single(
  collection: Collection<Document>,
  op: AnyBulkWriteOperation<Document>,
  concern: { writeConcern?: WriteConcernSettings },
): Promise<void> {
  if ('insertOne' in op) {
    await collection.insertOne(op.insertOne.document, concern);
  } else if ('updateOne' in op) {
    const { filter, update, upsert } = op.updateOne;
    await collection.updateOne(
      filter,
      update as Document,
      upsert ? { upsert, ...concern } : concern,
    );
  } else if ('deleteOne' in op) {
    await collection.deleteOne(op.deleteOne.filter, concern);
  } else {
    await collection.bulkWrite([op], { ordered: false, ...concern });
  }
}

/**
 * The statements' own errors by index, when the command itself succeeded (acknowledged, no write
 * concern error) and only some statements failed; undefined when the whole command failed.
 */
function statementErrors(err: unknown): Map<number, MongoServerError> | undefined {
  if (!(err instanceof MongoBulkWriteError)) return undefined;
  const writeErrors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
  if (writeErrors.length === 0 || err.result?.getWriteConcernError()) return undefined;
  const byIndex = new Map<number, MongoServerError>();
  for (const e of writeErrors) {
    byIndex.set(e.index, new MongoServerError({ message: e.errmsg ?? '', code: e.code }));
  }
  return byIndex;
}
