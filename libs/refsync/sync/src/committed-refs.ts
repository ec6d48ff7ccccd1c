/**
 * The committed state a run diffs against: id -> hash of every committed item (never its data),
 * loaded in the background while the upstream files are opened and parsed.
 */
import type { Dataset } from '@nhp/refsync-contracts';
import type { SyncStore } from './ports';

export interface CommittedRef {
  id: string;
  hash: string;
  isDeleted: boolean;
}

export interface LoadedRefs {
  byId: Map<string, CommittedRef>;
  /** Active items by the sourceHash of their committed data (those that have one). */
  bySourceHash: Map<string, CommittedRef>;
}

export interface CommittedRefsLoad {
  done: Promise<CommittedRef[]>;
  /** Set once loading finished. */
  loaded?: LoadedRefs;
}

export function loadCommittedRefs(store: SyncStore, dataset: Dataset): CommittedRefsLoad {
  const load: CommittedRefsLoad = { done: Promise.resolve([]) };
  load.done = (async () => {
    const refs: CommittedRef[] = [];
    const byId = new Map<string, CommittedRef>();
    const bySourceHash = new Map<string, CommittedRef>();
    for await (const item of store.committedRefs(dataset)) {
      const ref = { id: item.itemId, hash: item.hash, isDeleted: item.isDeleted };
      refs.push(ref);
      byId.set(ref.id, ref);
      if (!ref.isDeleted && item.sourceHash) bySourceHash.set(item.sourceHash, ref);
    }
    load.loaded = { byId, bySourceHash };
    return refs;
  })();
  // Awaited in planDataset; this only keeps a failure from being reported as unhandled meanwhile
  // (or at all, when the run stops before it reaches this dataset).
  load.done.catch(() => undefined);
  return load;
}
