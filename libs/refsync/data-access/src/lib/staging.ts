import { DATASETS, type Dataset, type ItemDataOf } from '@nhp/refsync-contracts';
import { contentHash } from '@nhp/refsync-domain';
import { duplicateKeyInfo } from '@nhp/shared-persistence';
import type { AnyBulkWriteOperation, Connection } from 'mongoose';
import { stagingRejected, versionConflict } from './errors';
import { itemDocId, refsyncModels, type ItemState, type ItemVersionDoc } from './models';
import { visibleState } from './visibility';

/**
 * Staging: a run's item changes written as version V+1, invisible to readers until the commit (in
 * write-repository.ts) makes V+1 the committed version; the committed items a diff compares
 * against; and recover(), which undoes what an uncommitted run left behind.
 */
/** An item as committed at the current version (what the diff compares against). */
export interface CommittedItem<D extends Dataset = Dataset> {
  itemId: string;
  hash: string;
  /** See ItemState.sourceHash; null when unknown. */
  sourceHash: string | null;
  isDeleted: boolean;
  version: number;
  data: ItemDataOf<D>;
}
export type CommittedItemRef = Omit<CommittedItem, 'data'>;

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

export interface StageResult {
  /** Item states staged: one document written each (an insert for a new item, else one update). */
  inserted: number;
  /** Of those, the ones that replaced a committed state (kept in the document's `prev`). */
  superseded: number;
}

export interface RecoverResult {
  /**
   * Staged item states of an uncommitted version that were discarded: the documents of items it
   * created (deleted) plus those of items it changed (set back to `prev`).
   */
  removed: number;
  /** Committed item states made the head again (the items it changed). */
  restored: number;
}

/** Changes per read + write round: bounds memory and request size for 100k-item change sets. */
export const STAGE_BATCH_SIZE = 1000;

/** The staging side of the write repository. */
export interface Staging {
  /** Undoes whatever an uncommitted run left behind. Call first, while holding the importer lease. */
  recover(): Promise<RecoverResult>;
  /** The committed items of one dataset (tombstones included), streamed from a cursor. */
  committedItems<D extends Dataset>(dataset: D): AsyncIterable<CommittedItem<D>>;
  committedItems<D extends Dataset>(
    dataset: D,
    options: { includeData: false },
  ): AsyncIterable<CommittedItemRef>;
  /** `committedItems(dataset, { includeData: false })`: what a hash diff needs, nothing more. */
  committedRefs(dataset: Dataset): AsyncIterable<CommittedItemRef>;
  /** Writes changes as version `nextVersion`, invisible to readers until `commit`. */
  stageChanges(
    nextVersion: number,
    dataset: Dataset,
    changes: Iterable<StagedItemChange>,
    committedAt: Date,
  ): Promise<StageResult>;
}

/**
 * `committedVersion` reads the state document's version (the single source of visibility). Driver
 * errors are left for the write repository to translate.
 */
export function createStaging(conn: Connection, committedVersion: () => Promise<number>): Staging {
  const { Item } = refsyncModels(conn);

  async function* committedItems(
    dataset: Dataset,
    options: { includeData?: boolean } = {},
  ): AsyncGenerator<CommittedItem | CommittedItemRef> {
    const includeData = options.includeData ?? true;
    const version = await committedVersion();
    if (version === 0) return;
    // Every head document of the dataset; visibleState picks the committed state (the writer's own
    // staging, if any, is above `version` and shows its prev).
    const projection = {
      _id: 0,
      itemId: 1,
      hash: 1,
      sourceHash: 1,
      isDeleted: 1,
      version: 1,
      'prev.version': 1,
      'prev.hash': 1,
      'prev.sourceHash': 1,
      'prev.isDeleted': 1,
      ...(includeData ? { data: 1, 'prev.data': 1 } : {}),
    };
    const cursor = Item.find({ dataset }, projection)
      .lean()
      .cursor({ batchSize: STAGE_BATCH_SIZE });
    for await (const doc of cursor) {
      // The projection leaves out lastChanged, which neither visibleState nor the result needs.
      const state = visibleState(
        doc as unknown as ItemState & { prev?: ItemState | null },
        version,
      );
      if (!state || state === 'lost') continue;
      const ref = {
        itemId: doc.itemId,
        hash: state.hash,
        sourceHash: state.sourceHash ?? null,
        isDeleted: state.isDeleted,
        version: state.version,
      };
      yield includeData ? { ...ref, data: state.data as CommittedItem['data'] } : ref;
    }
  }

  /**
   * Stages one batch: checks it can be staged, reads the items' documents once, then writes each
   * item once (an insert for a new item, an update that keeps the committed state as prev).
   */
  async function stageBatch(
    nextVersion: number,
    dataset: Dataset,
    batch: StagedItemChange[],
    committedAt: Date,
  ): Promise<StageResult> {
    rejectRepeatedItems(batch);
    const prior = await readItemDocuments(dataset, batch);
    rejectUnstageable(nextVersion, dataset, batch, prior);
    const { inserts, updates } = itemWrites(nextVersion, dataset, batch, prior, committedAt);
    await insertNewItems(dataset, inserts);
    await updateChangedItems(dataset, updates);
    return { inserted: inserts.length + updates.length, superseded: updates.length };
  }

  /**
   * One read per batch (reads are cheap, writes are what a run is measured by): the items'
   * documents, to know insert from update, to keep the committed state as prev, and for
   * tombstones' last data.
   */
  async function readItemDocuments(
    dataset: Dataset,
    batch: StagedItemChange[],
  ): Promise<Map<string, PriorItem>> {
    const existing = await Item.find(
      { _id: { $in: batch.map((c) => itemDocId(dataset, c.itemId)) } },
      {
        _id: 0,
        itemId: 1,
        version: 1,
        data: 1,
        hash: 1,
        sourceHash: 1,
        isDeleted: 1,
        lastChanged: 1,
      },
    ).lean();
    const byItem = new Map<string, PriorItem>();
    for (const doc of existing) byItem.set(doc.itemId, doc);
    return byItem;
  }

  async function insertNewItems(dataset: Dataset, inserts: ItemVersionDoc[]): Promise<void> {
    if (inserts.length === 0) return;
    try {
      // lean: the documents are built complete; skipping hydration keeps 100k-item runs cheap.
      await Item.insertMany(inserts, { ordered: false, lean: true });
    } catch (err) {
      if (isDuplicateKey(err)) {
        throw stagingRejected(
          `some new items of ${dataset} were created meanwhile: another writer is staging (the importer lease should prevent this); call recover() and start over`,
        );
      }
      throw err;
    }
  }

  async function updateChangedItems(
    dataset: Dataset,
    updates: AnyBulkWriteOperation<ItemVersionDoc>[],
  ): Promise<void> {
    if (updates.length === 0) return;
    const result = await Item.bulkWrite(updates, { ordered: false });
    if (result.matchedCount !== updates.length) {
      throw stagingRejected(
        `${updates.length - result.matchedCount} items of ${dataset} changed while being staged: another writer is staging (the importer lease should prevent this); call recover() and start over`,
      );
    }
  }

  return {
    committedItems: committedItems as Staging['committedItems'],
    committedRefs: (dataset) =>
      committedItems(dataset, { includeData: false }) as AsyncIterable<CommittedItemRef>,

    async recover() {
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
    },

    async stageChanges(nextVersion, dataset, changes, committedAt) {
      const version = await committedVersion();
      if (nextVersion !== version + 1) throw versionConflict(nextVersion - 1, version);
      const total: StageResult = { inserted: 0, superseded: 0 };
      let batch: StagedItemChange[] = [];
      const flush = async () => {
        const r = await stageBatch(nextVersion, dataset, batch, committedAt);
        total.inserted += r.inserted;
        total.superseded += r.superseded;
        batch = [];
      };
      for (const change of changes) {
        batch.push(change);
        if (batch.length >= STAGE_BATCH_SIZE) await flush();
      }
      if (batch.length > 0) await flush();
      return total;
    },
  };
}

/** An item's document as stageBatch reads it. */
type PriorItem = ItemState & { itemId: string };

/** A tombstone without data keeps the item's last committed data (so clients learn which id went away). */
const keepsData = (c: StagedItemChange) => c.isDeleted && c.data === undefined;

function rejectRepeatedItems(batch: StagedItemChange[]): void {
  const ids = batch.map((c) => c.itemId);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate !== undefined) {
    throw stagingRejected(`item ${duplicate} appears twice in one change set`, [duplicate]);
  }
}

/** Refuses a batch that meets leftovers of an unrecovered run, or deletes what is not active. */
function rejectUnstageable(
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
function itemWrites(
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

function isDuplicateKey(err: unknown): boolean {
  return duplicateKeyInfo(err) !== undefined;
}
