/**
 * Pass 2 of a run that changes something: the plan written as version V+1, invisible to readers
 * until the commit. Changed items kept from pass 1 are staged from memory; the others are read
 * again from the upstream, and each must still hash to what pass 1 saw.
 */
import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import type { DatasetPlan, Plan } from './plan';
import type { StagedChange, SyncStore, UpstreamSnapshot } from './ports';
import { syncAborted, type SyncAbortedError } from './report';
import type { RunContext } from './types';
import { readable } from './upstream';
import { validate } from './validate';

/** What was staged: the version the commit makes visible, and the time its items carry. */
export interface Staged {
  nextVersion: number;
  committedAt: Date;
}

const DEFAULT_BATCH_SIZE = 1000;

export async function stageChangeSet(run: RunContext, plan: Plan): Promise<Staged> {
  const { deps, options, log, previousVersion } = run;
  const nextVersion = previousVersion + 1;
  const committedAt = run.now();
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  for (const dataset of DATASETS) {
    await stageDataset(
      plan.plans[dataset],
      plan.snapshots[dataset],
      deps.store,
      nextVersion,
      committedAt,
      batchSize,
    );
  }
  log.info({ nextVersion }, 'change set staged');
  await options.afterStaged?.({ nextVersion });
  return { nextVersion, committedAt };
}

async function stageDataset(
  plan: DatasetPlan,
  snapshot: UpstreamSnapshot,
  store: SyncStore,
  nextVersion: number,
  committedAt: Date,
  batchSize: number,
): Promise<void> {
  const { dataset } = plan;
  let batch: StagedChange[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await store.stageChanges(nextVersion, dataset, batch, committedAt);
    batch = [];
  };

  // Tombstones: the store keeps each deleted item's last committed data.
  for (const itemId of plan.deleted) {
    batch.push({ itemId, isDeleted: true });
    if (batch.length >= batchSize) await flush();
  }

  // Changed items kept from the first pass are staged from memory; the others are read again.
  const pending = new Map<string, string>();
  for (const [itemId, hash] of plan.upserts) {
    const kept = plan.buffered?.get(itemId);
    if (kept) {
      batch.push({ itemId, data: kept.data, hash, sourceHash: kept.sourceHash, isDeleted: false });
      if (batch.length >= batchSize) await flush();
    } else {
      pending.set(itemId, hash);
    }
  }
  if (pending.size === 0) {
    await flush();
    return;
  }

  for await (const record of readable(dataset, snapshot)) {
    if (pending.size === 0) break; // everything needed was found: no need to read the rest
    // Unchanged items (the vast majority) are skipped before the costly validation and hashing.
    const rawId = (record.value as { id?: unknown } | null | undefined)?.id;
    if (typeof rawId === 'string' && !pending.has(rawId)) continue;
    const result = validate(dataset, record);
    if (!result.ok)
      throw upstreamChanged(dataset, `item #${record.index} no longer passes the contract`);
    const expected = pending.get(result.item.id);
    if (expected === undefined) continue;
    if (expected !== result.item.hash)
      throw upstreamChanged(dataset, `item ${JSON.stringify(result.item.id)} differs`);
    pending.delete(result.item.id);
    batch.push({
      itemId: result.item.id,
      data: result.item.data,
      hash: result.item.hash,
      sourceHash: record.sourceHash,
      isDeleted: false,
    });
    if (batch.length >= batchSize) await flush();
  }
  if (pending.size > 0) throw upstreamChanged(dataset, `${pending.size} item(s) disappeared`);
  await flush();
}

function upstreamChanged(dataset: Dataset, detail: string): SyncAbortedError {
  return syncAborted(
    'upstream_changed',
    `${dataset}: the upstream file changed while it was being read (${detail}); nothing committed, the next run will pick up the new file`,
  );
}
