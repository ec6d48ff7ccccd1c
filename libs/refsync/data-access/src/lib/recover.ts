/**
 * recover(): undoes what an uncommitted run left behind, derived from the state alone (every head
 * above the committed version belongs to an uncommitted run; its committed state is `prev`, or
 * none). Driver errors are left for the write repository to translate.
 */
import { DATASETS } from '@nhp/refsync-contracts';
import type { Connection } from 'mongoose';
import { refsyncModels } from './models';

export interface RecoverResult {
  /**
   * Staged item states of an uncommitted version that were discarded: the documents of items it
   * created (deleted) plus those of items it changed (set back to `prev`).
   */
  removed: number;
  /** Committed item states made the head again (the items it changed). */
  restored: number;
}

/** `committedVersion` reads the state document's version (the single source of visibility). */
export function recoverer(conn: Connection, committedVersion: () => Promise<number>) {
  const { Item } = refsyncModels(conn);

  return async function recover(): Promise<RecoverResult> {
    const version = await committedVersion();
    let removed = 0;
    let restored = 0;
    for (const dataset of DATASETS) {
      // Items the uncommitted run created: nothing to go back to.
      const created = await Item.deleteMany({ dataset, version: { $gt: version }, prev: null });
      // Items it changed: their committed state is prev. One atomic update per document, so a
      // crash inside recover() leaves each document either staged or restored; rerun it.
      const changed = await Item.collection.updateMany(
        { dataset, version: { $gt: version }, prev: { $ne: null } },
        [
          {
            $set: {
              version: '$prev.version',
              data: '$prev.data',
              hash: '$prev.hash',
              sourceHash: { $ifNull: ['$prev.sourceHash', null] },
              isDeleted: '$prev.isDeleted',
              lastChanged: '$prev.lastChanged',
              prev: { $literal: null },
            },
          },
        ],
      );
      // Every staged state was discarded; the changed items' committed states are back.
      removed += created.deletedCount + changed.modifiedCount;
      restored += changed.modifiedCount;
    }
    return { removed, restored };
  };
}
