/**
 * The committed items of one dataset, as a run's diff reads them: each item's state at the
 * committed version (the writer's own staging, if any, is above it and shows its prev), streamed
 * from a cursor. Driver errors are left for the write repository to translate.
 */
import type { Dataset, ItemDataOf } from '@nhp/refsync-contracts';
import type { Connection } from 'mongoose';
import { refsyncModels, type ItemState } from './models';
import { STAGE_BATCH_SIZE } from './stage-changes';
import { visibleState } from './visibility';

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

/** `committedVersion` reads the state document's version (the single source of visibility). */
export function committedItemsReader(conn: Connection, committedVersion: () => Promise<number>) {
  const { Item } = refsyncModels(conn);

  return async function* committedItems(
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
  };
}
