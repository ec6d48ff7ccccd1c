import type { AnyBulkWriteOperation } from 'mongodb';
import type { Connection } from 'mongoose';
import { Schema } from 'mongoose';
import type { BatchedWrites } from './batched-writes';
import type { DocumentRef } from './types';

/**
 * A pointer to a document that carries (or is about to carry) an entry: how a sweep after a crash
 * finds entries when they can be in any document of any collection. Inserted before the write
 * that carries the entry, removed once the entry is relayed.
 */
export interface OutboxPointer {
  /** The entry's id. */
  _id: string;
  collection: string;
  docId: unknown;
  createdAt: Date;
}

export interface OutboxPointers {
  readonly collection: string;
  /** Before the write: the document `ref` is about to carry the entry `entryId`. */
  register(entryId: string, ref: DocumentRef): Promise<void>;
  /**
   * The oldest pointers, up to `limit`; with `after` (the last pointer of the page before), the
   * next ones, in the same order (by `createdAt`, then `_id`).
   */
  list(limit: number, after?: Pick<OutboxPointer, '_id' | 'createdAt'>): Promise<OutboxPointer[]>;
  /** Pointers older than the stale age (their write has had ample time), oldest first. */
  stale(limit: number): Promise<OutboxPointer[]>;
  forget(entryId: string): Promise<void>;
  /**
   * How many pointers there are and when the oldest was made, cheaply: the count from the
   * collection's metadata (no scan, however long the backlog), the oldest through the
   * `created_at` index. For metrics; a pointer whose write is under way counts as pending.
   */
  backlog(maxTimeMs?: number): Promise<{ pending: number; oldestCreatedAt: Date | undefined }>;
}

export interface OutboxPointersOptions {
  connection: Connection;
  /** The pointers' collection. */
  collection: string;
  /** A pointer older than this whose entry is in no document names a write that never happened. */
  staleAfterMs: number;
  now?: () => number;
  /** Registers and forgets through these (one command for the pointers of many requests). */
  writes?: BatchedWrites;
}

/** The pointers' schema, for the index a sweep reads them by; register it as a model to build it. */
export function pointerSchema(collection: string): Schema {
  const schema = new Schema(
    { _id: { type: String, required: true } },
    { collection, versionKey: false, strict: false },
  );
  schema.index({ createdAt: 1 }, { name: 'created_at' });
  return schema;
}

export function outboxPointers(options: OutboxPointersOptions): OutboxPointers {
  const { connection, collection, staleAfterMs, writes } = options;
  const now = options.now ?? Date.now;
  const pointers = () => connection.collection<OutboxPointer>(collection);
  const forgetStatement = (entryId: string): AnyBulkWriteOperation<OutboxPointer> => ({
    deleteOne: { filter: { _id: entryId } },
  });
  return {
    collection,
    async register(entryId, ref) {
      const pointer: OutboxPointer = {
        _id: entryId,
        collection: ref.collection,
        docId: ref.docId,
        createdAt: new Date(now()),
      };
      if (writes)
        await writes.write<OutboxPointer>(collection, { insertOne: { document: pointer } });
      else await pointers().insertOne(pointer);
    },
    list: (limit, after) =>
      pointers()
        .find(
          after
            ? {
                $or: [
                  { createdAt: { $gt: after.createdAt } },
                  { createdAt: after.createdAt, _id: { $gt: after._id } },
                ],
              }
            : {},
        )
        .sort({ createdAt: 1, _id: 1 })
        .limit(limit)
        .toArray(),
    stale: (limit) =>
      pointers()
        .find({ createdAt: { $lt: new Date(now() - staleAfterMs) } })
        .sort({ createdAt: 1 })
        .limit(limit)
        .toArray(),
    async forget(entryId) {
      if (writes) await writes.write(collection, forgetStatement(entryId));
      else await pointers().deleteOne({ _id: entryId });
    },
    async backlog(maxTimeMs = 1000) {
      const [pending, oldest] = await Promise.all([
        pointers().estimatedDocumentCount({ maxTimeMS: maxTimeMs }),
        pointers()
          .find({}, { projection: { createdAt: 1 }, maxTimeMS: maxTimeMs })
          .sort({ createdAt: 1 })
          .limit(1)
          .next(),
      ]);
      return { pending, oldestCreatedAt: oldest?.createdAt };
    },
  };
}
