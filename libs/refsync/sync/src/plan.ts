/**
 * Pass 1 of a run: every upstream record validated and diffed against the committed state, before
 * anything is written. The plan is what the guards judge and what staging writes.
 */
import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import { computeChangeSet, type ChangeSetCounts } from '@nhp/refsync-domain';
import type { CommittedRefsLoad, LoadedRefs } from './committed-refs';
import type { UpstreamRecord, UpstreamSnapshot } from './ports';
import { formatReport, syncAborted, type DuplicateId, type ValidationReport } from './report';
import { byDataset, type ChangeIds, type RunContext } from './types';
import { readable } from './upstream';
import { unchangedItem, validate } from './validate';

export interface DatasetPlan {
  dataset: Dataset;
  counts: ChangeSetCounts;
  /** id -> hash of every item to write as active (added, changed, reappeared). */
  upserts: Map<string, string>;
  /** The validated data of the upserts, kept from the first pass while they are few enough. */
  buffered?: Map<string, { data: unknown; sourceHash?: string }>;
  deleted: Set<string>;
  ids: ChangeIds;
  /** Where the time went, for the log. */
  timings: { readMs: number; waitedForCommittedMs: number; buffered: boolean };
}

/** The validated, diffed upstream of both datasets: what the guards judge and the commit writes. */
export interface Plan {
  snapshots: Record<Dataset, UpstreamSnapshot>;
  plans: Record<Dataset, DatasetPlan>;
  datasets: Record<Dataset, ChangeSetCounts>;
  sources: Record<Dataset, string>;
}

const DEFAULT_MAX_BUFFERED_CHANGES = 10_000;

/**
 * Validates everything and diffs it. Both datasets at once: while one waits for its committed
 * refs, the other is parsed. Any invalid item or duplicate id aborts the run with a report naming
 * each one.
 */
export async function planChangeSet(
  run: RunContext,
  snapshots: Record<Dataset, UpstreamSnapshot>,
  committedRefs: Record<Dataset, CommittedRefsLoad>,
): Promise<Plan> {
  const maxBuffered = run.options.maxBufferedChanges ?? DEFAULT_MAX_BUFFERED_CHANGES;
  const parts = DATASETS.map((): ValidationReport => ({ invalidItems: [], duplicateIds: [] }));
  const settled = await Promise.allSettled(
    DATASETS.map((dataset, i) =>
      planDataset(
        dataset,
        snapshots[dataset],
        committedRefs[dataset],
        parts[i] as ValidationReport,
        maxBuffered,
      ),
    ),
  );
  // allSettled: when one dataset fails, the other must finish (or fail) before the snapshots close.
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const planned = settled.map((r) => (r as PromiseFulfilledResult<DatasetPlan>).value);
  const plans = Object.fromEntries(planned.map((p) => [p.dataset, p])) as Record<
    Dataset,
    DatasetPlan
  >;
  const datasets = byDataset((d) => plans[d].counts);
  // The report lists the datasets in their usual order, each in file order.
  const report: ValidationReport = {
    invalidItems: parts.flatMap((part) => part.invalidItems),
    duplicateIds: parts.flatMap((part) => part.duplicateIds),
  };
  if (report.invalidItems.length + report.duplicateIds.length > 0) {
    // The message stays readable in a log line; the full report travels in `details`.
    const lines = formatReport(report, 20);
    throw syncAborted(
      'invalid_upstream',
      `upstream data rejected, nothing committed: ${report.invalidItems.length} invalid item(s), ` +
        `${report.duplicateIds.length} duplicate id(s)\n  ${lines.join('\n  ')}`,
      { report, datasets },
    );
  }
  return { snapshots, plans, datasets, sources: byDataset((d) => snapshots[d].description) };
}

export function hasChanges(plan: Plan): boolean {
  return DATASETS.some((d) => plan.plans[d].upserts.size + plan.plans[d].deleted.size > 0);
}

async function planDataset(
  dataset: Dataset,
  snapshot: UpstreamSnapshot,
  refs: CommittedRefsLoad,
  report: ValidationReport,
  maxBuffered: number,
): Promise<DatasetPlan> {
  // Changed items are kept for staging while they are few. Until the committed refs are in, no
  // record can be judged (most are recognised by their sourceHash, which needs the refs): up to
  // maxBuffered records wait unparsed in `waiting`; when that is full, reading waits for the refs.
  let buffered: DatasetPlan['buffered'] = new Map();
  let waiting: UpstreamRecord[] = [];
  const startedAt = Date.now();
  let waitedMs = 0;
  const awaitRefs = async (): Promise<LoadedRefs> => {
    if (!refs.loaded) {
      const waitStart = Date.now();
      await refs.done;
      waitedMs += Date.now() - waitStart;
    }
    return refs.loaded as LoadedRefs;
  };

  const upstream: Array<{ id: string; data: undefined; hash: string }> = [];
  const firstSeenAt = new Map<string, number>();
  const duplicates = new Map<string, DuplicateId>();
  const take = (record: UpstreamRecord, loaded: LoadedRefs) => {
    const result = unchangedItem(record, loaded) ?? validate(dataset, record);
    if (!result.ok) {
      report.invalidItems.push(result.bad);
      return;
    }
    const { id, hash } = result.item;
    const first = firstSeenAt.get(id);
    if (first !== undefined) {
      const dup = duplicates.get(id) ?? { dataset, id, positions: [first] };
      dup.positions.push(record.index);
      duplicates.set(id, dup);
      return;
    }
    firstSeenAt.set(id, record.index);
    upstream.push({ id, data: undefined, hash });
    if (!buffered) return;
    const previous = loaded.byId.get(id);
    if (previous && !previous.isDeleted && previous.hash === hash) return;
    if (buffered.size < maxBuffered) {
      buffered.set(id, { data: result.item.data, sourceHash: record.sourceHash });
    } else {
      buffered = undefined; // too many: stage from a second pass instead
    }
  };
  const takeWaiting = async () => {
    const loaded = await awaitRefs();
    for (const record of waiting) take(record, loaded);
    waiting = [];
  };

  for await (const record of readable(dataset, snapshot)) {
    if (refs.loaded && waiting.length === 0) {
      take(record, refs.loaded);
      continue;
    }
    waiting.push(record);
    if (waiting.length >= maxBuffered || refs.loaded) await takeWaiting();
  }
  await takeWaiting();
  report.duplicateIds.push(...duplicates.values());

  const committed = await refs.done;
  const changeSet = computeChangeSet(upstream, committed);
  const upserts = new Map<string, string>();
  for (const item of [...changeSet.added, ...changeSet.changed, ...changeSet.reappeared])
    upserts.set(item.id, item.hash);
  return {
    dataset,
    counts: changeSet.counts,
    upserts,
    ...(buffered ? { buffered } : {}),
    timings: {
      readMs: Date.now() - startedAt,
      waitedForCommittedMs: waitedMs,
      buffered: buffered !== undefined,
    },
    deleted: new Set(changeSet.deleted.map((d) => d.id)),
    ids: {
      added: changeSet.added.map((i) => i.id),
      changed: changeSet.changed.map((i) => i.id),
      reappeared: changeSet.reappeared.map((i) => i.id),
      deleted: changeSet.deleted.map((i) => i.id),
    },
  };
}
