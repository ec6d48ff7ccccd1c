/**
 * What staging a batch decides, without I/O: which changes are refused (a repeated item, leftovers
 * of an unrecovered run, a deletion of what is not active) and the one write of each item (an
 * insert for a new one, an update that keeps the committed state as `prev`).
 */
import type { Dataset } from '@nhp/refsync-contracts';
import { contentHash } from '@nhp/refsync-domain';
import type { AnyBulkWriteOperation } from 'mongoose';
import { stagingRejected } from './errors';
import { itemDocId, type ItemState, type ItemVersionDoc } from './models';

/** One change to stage. Shape-compatible with the domain's `ItemChange`. */
export interface StagedItemChange<T = unknown> {
  itemId: string;
  /**
   * Required unless isDeleted: a tombstone without data keeps the last committed data. Stored as
   * given: validate with the dataset's contract schema before staging.
   */
  data?: T;
  /** contentHash(data); computed when absent. */
  hash?: string;
  /**
   * Hash of the exact upstream bytes `data` was parsed from (see ItemState.sourceHash). Give it only
   * for data parsed from exactly those bytes; ignored for tombstones.
   */
  sourceHash?: string;
  isDeleted: boolean;
}

/** An item's document as stageBatch reads it. */
export type PriorItem = ItemState & { itemId: string };

/** A tombstone without data keeps the item's last committed data (so clients learn which id went away). */
const keepsData = (c: StagedItemChange) => c.isDeleted && c.data === undefined;

export function rejectRepeatedItems(batch: StagedItemChange[]): void {
  const ids = batch.map((c) => c.itemId);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate !== undefined) {
    throw stagingRejected(`item ${duplicate} appears twice in one change set`, [duplicate]);
  }
}

/** Refuses a batch that meets leftovers of an unrecovered run, or deletes what is not active. */
export function rejectUnstageable(
  nextVersion: number,
  dataset: Dataset,
  batch: StagedItemChange[],
  prior: Map<string, PriorItem>,
): void {
  const committed = nextVersion - 1;
  const leftovers = [...prior.values()].filter((d) => d.version > committed).map((d) => d.itemId);
  if (leftovers.length > 0) {
    throw stagingRejected(
      `version ${nextVersion} already holds some of these items in ${dataset}: a previous run was not cleaned up (call recover() first) or the change set repeats an item`,
      leftovers,
    );
  }
  const unknown = batch
    .filter((c) => keepsData(c) && !(prior.get(c.itemId)?.isDeleted === false))
    .map((c) => c.itemId);
  if (unknown.length > 0) {
    throw stagingRejected(
      `cannot delete items that are not active at version ${committed}: ${unknown.slice(0, 20).join(', ')}`,
      unknown,
    );
  }
}

/** The one write of each item: an insert for a new one, an update for one with a document. */
export function itemWrites(
  nextVersion: number,
  dataset: Dataset,
  batch: StagedItemChange[],
  prior: Map<string, PriorItem>,
  committedAt: Date,
): { inserts: ItemVersionDoc[]; updates: AnyBulkWriteOperation<ItemVersionDoc>[] } {
  const inserts: ItemVersionDoc[] = [];
  const updates: AnyBulkWriteOperation<ItemVersionDoc>[] = [];
  for (const change of batch) {
    const before = prior.get(change.itemId);
    const state = stagedState(nextVersion, change, before, committedAt);
    const _id = itemDocId(dataset, change.itemId);
    if (!before) {
      inserts.push({ _id, dataset, itemId: change.itemId, ...state, prev: null });
      continue;
    }
    // The new state on top, the committed one kept as prev for readers at the committed version.
    // Filtered on the version read, so a document changed meanwhile (a second writer, which the
    // lease rules out) is not overwritten.
    updates.push({
      updateOne: {
        filter: { _id, version: before.version },
        update: {
          $set: {
            ...state,
            prev: {
              version: before.version,
              data: before.data,
              hash: before.hash,
              sourceHash: before.sourceHash ?? null,
              isDeleted: before.isDeleted,
              lastChanged: before.lastChanged,
            },
          },
        },
      },
    });
  }
  return { inserts, updates };
}

function stagedState(
  nextVersion: number,
  change: StagedItemChange,
  before: PriorItem | undefined,
  committedAt: Date,
): ItemState {
  if (!keepsData(change) && change.data === undefined) {
    throw stagingRejected(`item ${change.itemId} has no data`, [change.itemId]);
  }
  const kept = keepsData(change) ? before : undefined;
  const data = kept ? kept.data : change.data;
  return {
    version: nextVersion,
    data,
    hash: change.hash ?? kept?.hash ?? contentHash(data),
    // A tombstone's data is the last committed data, not parsed from any upstream bytes.
    sourceHash: change.isDeleted ? null : (change.sourceHash ?? null),
    isDeleted: change.isDeleted,
    lastChanged: committedAt,
  };
}
