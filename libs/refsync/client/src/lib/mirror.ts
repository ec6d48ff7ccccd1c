import { DATASETS, type Dataset, type ItemDataOf } from '@nhp/refsync-contracts';
import type { ChangedItem, RefsyncClient } from './client';

/** What a mirror keeps per dataset; plain JSON, so it can be saved and loaded as is. */
export interface DatasetMirrorState {
  /** The currentVersion of the last response applied; null before the first sync. */
  currentVersion: number | null;
  /** ETag of the last 200 response and the sinceVersion of the request that got it. */
  etag: string | null;
  etagSinceVersion: number | null;
  /** Active items by id. */
  items: Record<string, unknown>;
}

export type MirrorState = Partial<Record<Dataset, DatasetMirrorState>>;

/** What one sync changed in the local copy. */
export interface MirrorChanges {
  dataset: Dataset;
  fromVersion: number | null;
  currentVersion: number;
  /** true when the service answered 304 (nothing to apply). */
  notModified: boolean;
  /** true when the local copy was rebuilt from the full list (first sync, or the server went back). */
  fullResync: boolean;
  added: string[];
  updated: string[];
  removed: string[];
}

const emptyState = (): DatasetMirrorState => ({
  currentVersion: null,
  etag: null,
  etagSinceVersion: null,
  items: {},
});

/** Structural equality of JSON values (key order ignored), to tell a real update from a re-send. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ak = Object.keys(a);
  const bo = b as Record<string, unknown>;
  return (
    ak.length === Object.keys(bo).length &&
    ak.every((k) => Object.hasOwn(bo, k) && sameJson((a as Record<string, unknown>)[k], bo[k]))
  );
}

/**
 * A local copy of the datasets kept current by the client rules (libs/refsync/domain/README.md, "Selection rules"): the first
 * sync fetches the full list; every later one sends the stored currentVersion as sinceVersion,
 * inserts or replaces non-deleted items by id and removes deleted ones, then stores the new
 * currentVersion. A repeated request is revalidated with its ETag (If-None-Match → 304).
 *
 * If the service ever reports a version below the stored one (its data was restored from an
 * older backup), a diff cannot be trusted, so the copy is rebuilt from the full list.
 */
export class RefsyncMirror {
  private readonly state: Record<Dataset, DatasetMirrorState>;

  constructor(
    private readonly client: RefsyncClient,
    initial: MirrorState = {},
  ) {
    this.state = {
      treatmentGroup: structuredClone(initial.treatmentGroup ?? emptyState()),
      reimbursementGroup: structuredClone(initial.reimbursementGroup ?? emptyState()),
    };
  }

  async sync(dataset: Dataset): Promise<MirrorChanges> {
    const local = this.state[dataset];
    const fromVersion = local.currentVersion;
    const since = fromVersion ?? undefined;
    const ifNoneMatch =
      local.etag !== null && local.etagSinceVersion === (since ?? null) ? local.etag : undefined;
    const result = await this.client.fetchDataset(dataset, { sinceVersion: since, ifNoneMatch });
    const changes: MirrorChanges = {
      dataset,
      fromVersion,
      currentVersion: fromVersion ?? 0,
      notModified: false,
      fullResync: since === undefined,
      added: [],
      updated: [],
      removed: [],
    };
    if (result.status === 304) {
      changes.notModified = true;
      return changes;
    }
    if (fromVersion !== null && result.currentVersion < fromVersion) {
      return this.resync(dataset, changes);
    }
    this.apply(local, result.items, changes);
    local.currentVersion = result.currentVersion;
    local.etag = result.etag ?? null;
    local.etagSinceVersion = since ?? null;
    changes.currentVersion = result.currentVersion;
    return changes;
  }

  /** Both datasets, one after the other. */
  async syncAll(datasets: readonly Dataset[] = DATASETS): Promise<MirrorChanges[]> {
    const all: MirrorChanges[] = [];
    for (const dataset of datasets) all.push(await this.sync(dataset));
    return all;
  }

  /** The stored currentVersion, null before the first sync. */
  currentVersion(dataset: Dataset): number | null {
    return this.state[dataset].currentVersion;
  }

  /** The active items, ordered by id. */
  items<D extends Dataset>(dataset: D): ItemDataOf<D>[] {
    const items = this.state[dataset].items;
    return Object.keys(items)
      .sort()
      .map((id) => items[id] as ItemDataOf<D>);
  }

  get<D extends Dataset>(dataset: D, id: string): ItemDataOf<D> | undefined {
    const items = this.state[dataset].items;
    return Object.hasOwn(items, id) ? (items[id] as ItemDataOf<D>) : undefined;
  }

  /** A copy of everything the mirror keeps, to save and pass back to the constructor later. */
  snapshot(): MirrorState {
    return structuredClone(this.state);
  }

  private apply(local: DatasetMirrorState, items: ChangedItem[], changes: MirrorChanges): void {
    for (const item of items) {
      const id = item.data.id;
      const present = Object.hasOwn(local.items, id);
      if (item.isDeleted) {
        if (present) {
          delete local.items[id];
          changes.removed.push(id);
        }
        continue;
      }
      if (!present) changes.added.push(id);
      else if (!sameJson(local.items[id], item.data)) changes.updated.push(id);
      local.items[id] = item.data;
    }
  }

  private async resync(dataset: Dataset, changes: MirrorChanges): Promise<MirrorChanges> {
    const result = await this.client.fetchDataset(dataset);
    if (result.status === 304) return changes;
    const local = this.state[dataset];
    const before = local.items;
    const after: Record<string, unknown> = {};
    for (const item of result.items) if (!item.isDeleted) after[item.data.id] = item.data;
    for (const id of Object.keys(after)) {
      if (!Object.hasOwn(before, id)) changes.added.push(id);
      else if (!sameJson(before[id], after[id])) changes.updated.push(id);
    }
    for (const id of Object.keys(before)) if (!Object.hasOwn(after, id)) changes.removed.push(id);
    local.items = after;
    local.currentVersion = result.currentVersion;
    local.etag = result.etag ?? null;
    local.etagSinceVersion = null;
    changes.currentVersion = result.currentVersion;
    changes.fullResync = true;
    return changes;
  }
}
