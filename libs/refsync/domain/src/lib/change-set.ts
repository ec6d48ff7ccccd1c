import { AppError } from '@nhp/shared-errors';
import { contentHash } from './canonical-json';

export interface UpstreamItem<T = unknown> {
  id: string;
  data: T;
  /** Precomputed content hash; computed from `data` when absent. */
  hash?: string;
}

export interface CommittedItemRef {
  id: string;
  hash: string;
  isDeleted: boolean;
}

export interface ChangedItem<T = unknown> {
  id: string;
  data: T;
  hash: string;
}

export interface ChangeSetCounts {
  added: number;
  changed: number;
  deleted: number;
  reappeared: number;
  unchanged: number;
  /** Active items before the change set (committed, not deleted). */
  activeBefore: number;
  /** Active items after it: every upstream item is active. */
  activeAfter: number;
}

export interface ChangeSet<T = unknown, C extends CommittedItemRef = CommittedItemRef> {
  /** New ids. */
  added: ChangedItem<T>[];
  /** Active items whose canonical data changed. */
  changed: ChangedItem<T>[];
  /** Committed tombstones that upstream sends again: a change even when the data is identical. */
  reappeared: ChangedItem<T>[];
  /** Active committed items upstream no longer sends, as they were committed. */
  deleted: C[];
  unchanged: number;
  counts: ChangeSetCounts;
  /** True when committing this change set would create a new version. */
  hasChanges: boolean;
}

/** Code of the AppError computeChangeSet throws for repeated upstream ids (`details.ids`). */
export const REFSYNC_DUPLICATE_ITEM_IDS = 'REFSYNC_DUPLICATE_ITEM_IDS';

/** Upstream sent an id more than once: its data is refused, not published (`details.ids`). */
export function duplicateItemIds(ids: string[]): AppError {
  return new AppError({
    code: REFSYNC_DUPLICATE_ITEM_IDS,
    status: 422,
    category: 'validation',
    message: `duplicate item ids from upstream: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''}`,
    details: { ids },
  });
}

/** Ids that occur more than once, each reported once, in order of first repetition. */
export function findDuplicateIds(ids: Iterable<string>): string[] {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) duplicates.add(id);
    else seen.add(id);
  }
  return [...duplicates];
}

/**
 * Diffs an upstream snapshot against the committed state of one dataset by content hash. Deleted
 * committed items that upstream still omits stay tombstones and are not a change. Upstream ids must
 * be unique (the importer reports duplicates with `findDuplicateIds` before it gets here); a
 * duplicate throws because silently picking one would publish arbitrary data.
 */
export function computeChangeSet<T, C extends CommittedItemRef>(
  upstream: Iterable<UpstreamItem<T>>,
  committed: Iterable<C>,
): ChangeSet<T, C> {
  const committedById = new Map<string, C>();
  let activeBefore = 0;
  for (const item of committed) {
    committedById.set(item.id, item);
    if (!item.isDeleted) activeBefore += 1;
  }

  const added: ChangedItem<T>[] = [];
  const changed: ChangedItem<T>[] = [];
  const reappeared: ChangedItem<T>[] = [];
  const seen = new Set<string>();
  const duplicates: string[] = [];
  let unchanged = 0;

  for (const item of upstream) {
    if (seen.has(item.id)) {
      duplicates.push(item.id);
      continue;
    }
    seen.add(item.id);
    const hash = item.hash ?? contentHash(item.data);
    const entry = { id: item.id, data: item.data, hash };
    const previous = committedById.get(item.id);
    if (!previous) added.push(entry);
    else if (previous.isDeleted) reappeared.push(entry);
    else if (previous.hash !== hash) changed.push(entry);
    else unchanged += 1;
  }
  if (duplicates.length > 0) throw duplicateItemIds([...new Set(duplicates)]);

  const deleted: C[] = [];
  for (const item of committedById.values()) {
    if (!item.isDeleted && !seen.has(item.id)) deleted.push(item);
  }

  const counts: ChangeSetCounts = {
    added: added.length,
    changed: changed.length,
    deleted: deleted.length,
    reappeared: reappeared.length,
    unchanged,
    activeBefore,
    activeAfter: seen.size,
  };
  return {
    added,
    changed,
    reappeared,
    deleted,
    unchanged,
    counts,
    hasChanges: added.length + changed.length + reappeared.length + deleted.length > 0,
  };
}

/** One item change in the shape the write repository stages (`stageChanges`). */
export interface ItemChange<T = unknown> {
  itemId: string;
  /** Absent for a deletion: the tombstone keeps the last committed data. */
  data?: T;
  hash?: string;
  isDeleted: boolean;
}

/** The change set as the write side stages it: upserts first, then tombstones. */
export function toItemChanges<T>(changeSet: ChangeSet<T>): ItemChange<T>[] {
  const upserts = [...changeSet.added, ...changeSet.changed, ...changeSet.reappeared].map(
    (c): ItemChange<T> => ({ itemId: c.id, data: c.data, hash: c.hash, isDeleted: false }),
  );
  const tombstones = changeSet.deleted.map((c): ItemChange<T> => ({
    itemId: c.id,
    isDeleted: true,
  }));
  return [...upserts, ...tombstones];
}

/** The per-dataset counts of the sync-completed event: reappeared items count as added. */
export function eventCounts(changeSet: Pick<ChangeSet, 'counts'>): {
  added: number;
  updated: number;
  deleted: number;
  total: number;
} {
  const c = changeSet.counts;
  return {
    added: c.added + c.reappeared,
    updated: c.changed,
    deleted: c.deleted,
    total: c.activeAfter,
  };
}
