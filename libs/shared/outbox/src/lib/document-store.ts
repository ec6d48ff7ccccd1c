import type { BatchedWrites } from './batched-writes';
import type { DocumentEntries } from './document-entries';
import type { OutboxPointer, OutboxPointers } from './pointers';
import { documentKey, type DocumentRef, type OutboxEntry, type OutboxStore } from './types';

/** Pointers read at a time, oldest first. */
export const SWEEP_BATCH = 500;
/**
 * Pages of pointers a sweep reads at most (10 000 pointers); the rest wait for the next sweep.
 * More than one: pointers that lead to no pending entry (a write that never happened, whose
 * pointer is dropped only once stale; a pointer whose delete was lost) can be the oldest 500 for
 * up to the stale age, and a sweep that read only those relayed nothing else: an entry a crashed
 * instance left waited that long (40-58 s) for its event.
 */
export const SWEEP_PAGES = 20;

export type DocumentOutboxStoreOptions<E extends OutboxEntry> = {
  entries: DocumentEntries<E>;
} & (
  | {
      /** Entries may be in any document: a pointer per entry says where (see OutboxPointers). */
      pointers: OutboxPointers;
      /**
       * Settles entries through these (one command for many documents); each pointer is then
       * forgotten through the pointers' own writes.
       */
      writes?: BatchedWrites;
    }
  | {
      /** Entries are only ever in these documents (e.g. one state document). */
      documents: readonly DocumentRef[];
    }
);

/** The store of entries kept inside the changed documents (see `documentEntries`). */
export function documentOutboxStore<E extends OutboxEntry>(
  options: DocumentOutboxStoreOptions<E>,
): OutboxStore<E> {
  const { entries } = options;
  if (!('pointers' in options)) {
    const documents = [...options.documents];
    return {
      documents: async () => documents,
      pending: (ref) => entries.pending(ref),
      async settle(ref, entry) {
        await entries.settle(ref, entry.id);
      },
    };
  }
  const { pointers, writes } = options;
  return {
    async documents() {
      const unique = new Map<string, DocumentRef>();
      let after: OutboxPointer | undefined;
      for (let page = 0; page < SWEEP_PAGES; page++) {
        const batch = await pointers.list(SWEEP_BATCH, after);
        for (const p of batch) {
          const ref = { collection: p.collection, docId: p.docId };
          unique.set(documentKey(ref), ref);
        }
        if (batch.length < SWEEP_BATCH) break;
        after = batch[batch.length - 1];
      }
      return [...unique.values()];
    },
    pending: (ref) => entries.pending(ref),
    async settle(ref, entry) {
      if (writes) {
        await writes.write(ref.collection, entries.settleStatement(ref, entry.id));
        // Through the pointers' own writes (batched too when they were given theirs, with their
        // write concern).
        await pointers.forget(entry.id);
        return;
      }
      await entries.settle(ref, entry.id);
      await pointers.forget(entry.id);
    },
    // A stale pointer whose entry is in no document names a write that never happened (the
    // process died between the pointer and the write): drop it. One whose entry is still there
    // waits for its relay.
    async afterSweep() {
      for (const p of await pointers.stale(SWEEP_BATCH)) {
        const ref = { collection: p.collection, docId: p.docId };
        if (!(await entries.holds(ref, p._id))) await pointers.forget(p._id);
      }
    },
  };
}
