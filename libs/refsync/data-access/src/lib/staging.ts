/**
 * Staging, the write side below the commit: the committed items a diff reads
 * (./committed-items), a run's changes staged as version V+1 (./stage-changes), and recover(),
 * which undoes what an uncommitted run left behind (./recover). The commit itself, which makes
 * V+1 visible, is the state document's write in write-repository.ts.
 */
import type { Dataset } from '@nhp/refsync-contracts';
import type { Connection } from 'mongoose';
import { committedItemsReader, type CommittedItem, type CommittedItemRef } from './committed-items';
import { recoverer, type RecoverResult } from './recover';
import { stager, type StageResult } from './stage-changes';
import type { StagedItemChange } from './staged-writes';

export type { CommittedItem, CommittedItemRef } from './committed-items';
export type { RecoverResult } from './recover';
export { STAGE_BATCH_SIZE, type StageResult } from './stage-changes';
export type { StagedItemChange } from './staged-writes';

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
  const committedItems = committedItemsReader(conn, committedVersion);
  return {
    committedItems: committedItems as Staging['committedItems'],
    committedRefs: (dataset) =>
      committedItems(dataset, { includeData: false }) as AsyncIterable<CommittedItemRef>,
    recover: recoverer(conn, committedVersion),
    stageChanges: stager(conn, committedVersion),
  };
}
