/**
 * stageChanges(): a run's item changes written as version V+1, invisible to readers until the
 * commit (in write-repository.ts) makes V+1 the committed version. In batches: one read of the
 * batch's documents, then one write per item (./staged-writes decides which). Driver errors are
 * left for the write repository to translate.
 */
import type { Dataset } from '@nhp/refsync-contracts';
import { duplicateKeyInfo } from '@nhp/shared-persistence';
import type { AnyBulkWriteOperation, Connection } from 'mongoose';
import { stagingRejected, versionConflict } from './errors';
import { itemDocId, refsyncModels, type ItemVersionDoc } from './models';
import {
  itemWrites,
  rejectRepeatedItems,
  rejectUnstageable,
  type PriorItem,
  type StagedItemChange,
} from './staged-writes';

export interface StageResult {
  /** Item states staged: one document written each (an insert for a new item, else one update). */
  inserted: number;
  /** Of those, the ones that replaced a committed state (kept in the document's `prev`). */
  superseded: number;
}

/** Changes per read + write round: bounds memory and request size for 100k-item change sets. */
export const STAGE_BATCH_SIZE = 1000;

/** `committedVersion` reads the state document's version (the single source of visibility). */
export function stager(conn: Connection, committedVersion: () => Promise<number>) {
  const { Item } = refsyncModels(conn);

  async function stageChanges(
    nextVersion: number,
    dataset: Dataset,
    changes: Iterable<StagedItemChange>,
    committedAt: Date,
  ): Promise<StageResult> {
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

  return stageChanges;
}

function isDuplicateKey(err: unknown): boolean {
  return duplicateKeyInfo(err) !== undefined;
}
