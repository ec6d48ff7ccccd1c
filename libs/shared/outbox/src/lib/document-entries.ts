import type { AnyBulkWriteOperation, Document } from 'mongodb';
import type { Connection } from 'mongoose';
import type { DocumentRef, OutboxEntry } from './types';

/**
 * What happens to an entry once it is relayed:
 * - `pull`: it leaves the document (the document keeps only what is still to do);
 * - `mark`: it stays, with `publishedAt` set, for inspection (`trimSettled` bounds how many).
 */
export type SettleMode = 'pull' | 'mark';

export interface DocumentEntriesOptions {
  connection: Connection;
  /** The array field of a document that holds its entries. */
  field: string;
  settle: SettleMode;
}

/** The field `mark` sets on a relayed entry; null or absent while the entry is pending. */
export const PUBLISHED_AT = 'publishedAt';

/**
 * Entries kept inside the changed document: written by the change's own single-document write, so
 * the change and its entries are durable together or not at all, without a transaction. Reads and
 * writes go through the driver's collections (any schema); errors are the driver's, for the caller
 * to translate.
 */
export interface DocumentEntries<E extends OutboxEntry> {
  readonly field: string;
  readonly mode: SettleMode;
  /** `outboxPush(field, entry)`: records the entry in the change's own write. */
  push(entry: E): ReturnType<typeof outboxPush>;
  /** The document's entries still to relay, in the order they were written. */
  pending(ref: DocumentRef): Promise<E[]>;
  /** Whether the document still holds the entry, not yet relayed. */
  holds(ref: DocumentRef, id: string): Promise<boolean>;
  /** Settles a relayed entry (see SettleMode); false when it was not pending (any more). */
  settle(ref: DocumentRef, id: string, at?: Date): Promise<boolean>;
  /**
   * The same settle as a bulk statement on the document's collection (for `BatchedWrites`, which
   * tells no statement's count: for a caller that does not need `settle`'s answer).
   */
  settleStatement(ref: DocumentRef, id: string, at?: Date): AnyBulkWriteOperation<Document>;
  /**
   * `mark` only: drops the oldest relayed entries beyond the newest `keep` (by `createdAt` when
   * the entries have one, else in written order); pending entries stay. Returns how many went.
   */
  trimSettled(ref: DocumentRef, keep: number): Promise<number>;
}

/**
 * The update operator that records `entry` in the document's `field`; merge it into the change's
 * own update document. Typed loosely (`$push` of any field) so that it merges into the driver's
 * update types of any schema.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function outboxPush(field: string, entry: OutboxEntry): { $push: Record<string, any> } {
  return { $push: { [field]: entry } };
}

const isPending = (entry: Document) =>
  entry[PUBLISHED_AT] === null || entry[PUBLISHED_AT] === undefined;

export function documentEntries<E extends OutboxEntry>(
  options: DocumentEntriesOptions,
): DocumentEntries<E> {
  const { connection, field, settle: mode } = options;
  const collection = (ref: DocumentRef) => connection.collection<Document>(ref.collection);
  const byId = (ref: DocumentRef) => ({ _id: ref.docId as never });
  /** What settles an entry: pull it, or mark it relayed if it is still pending. */
  const settling = (
    ref: DocumentRef,
    id: string,
    at: Date,
  ): { filter: Document; update: Document } =>
    mode === 'pull'
      ? { filter: byId(ref), update: { $pull: { [field]: { id } } } }
      : {
          filter: { ...byId(ref), [field]: { $elemMatch: { id, [PUBLISHED_AT]: null } } },
          update: { $set: { [`${field}.$.${PUBLISHED_AT}`]: at } },
        };

  async function read(ref: DocumentRef): Promise<Document[]> {
    // Majority-committed entries only: on a replica set a sweep must not publish an entry whose
    // write a failover could still roll back (an event for a change that does not exist). On a
    // standalone this is the latest data; after our own majority-acknowledged write, it holds it.
    const doc = await collection(ref).findOne(byId(ref), {
      projection: { [field]: 1 },
      readConcern: { level: 'majority' },
    });
    return ((doc?.[field] as Document[] | undefined) ?? []).slice();
  }

  return {
    field,
    mode,

    push: (entry) => outboxPush(field, entry),

    async pending(ref) {
      const entries = await read(ref);
      return (mode === 'pull' ? entries : entries.filter(isPending)) as unknown as E[];
    },

    async holds(ref, id) {
      const pendingOnly = mode === 'pull' ? { id } : { id, [PUBLISHED_AT]: null };
      const count = await collection(ref).countDocuments({
        ...byId(ref),
        [field]: { $elemMatch: pendingOnly },
      });
      return count > 0;
    },

    async settle(ref, id, at = new Date()) {
      const { filter, update } = settling(ref, id, at);
      const result = await collection(ref).updateOne(filter, update);
      return result.modifiedCount > 0;
    },

    settleStatement(ref, id, at = new Date()) {
      return { updateOne: settling(ref, id, at) };
    },

    async trimSettled(ref, keep) {
      if (mode !== 'mark') return 0;
      const settled = (await read(ref)).filter((e) => !isPending(e));
      const time = (e: Document) => (e['createdAt'] instanceof Date ? e['createdAt'].getTime() : 0);
      settled.sort((a, b) => time(a) - time(b));
      const drop = settled.slice(0, Math.max(0, settled.length - keep)).map((e) => e['id']);
      if (drop.length === 0) return 0;
      await collection(ref).updateOne(byId(ref), {
        $pull: { [field]: { id: { $in: drop }, [PUBLISHED_AT]: { $ne: null } } },
      } as never);
      return drop.length;
    },
  };
}
