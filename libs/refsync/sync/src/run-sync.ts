import {
  DATASETS,
  itemDataSchemas,
  syncCompletedEventId,
  type Dataset,
  type SyncCompletedEventData,
} from '@nhp/refsync-contracts';
import {
  computeChangeSet,
  contentHash,
  deletionShare,
  eventCounts,
  exceedsDeletionShare,
} from '@nhp/refsync-domain';
import type {
  OutboxEvent,
  StagedChange,
  SyncLogger,
  SyncStore,
  UpstreamRecord,
  UpstreamSnapshot,
  UpstreamSource,
} from './ports';
import {
  SyncAbortedError,
  formatReport,
  type DatasetSummary,
  type DuplicateId,
  type InvalidItem,
  type ValidationReport,
} from './report';

export interface SyncDependencies {
  store: SyncStore;
  sources: Record<Dataset, UpstreamSource>;
  /** Builds the outbox entry (the full CloudEvent) for the event data; the id is decided here. */
  buildEvent(data: SyncCompletedEventData, options: { id: string; time: Date }): OutboxEvent;
  /** Confirms (and extends) the single-writer lease; throws when it is lost. */
  assertLeader?(): Promise<void>;
  logger: SyncLogger;
  now?: () => Date;
}

export interface SyncOptions {
  runId: string;
  /** Largest share (0..1) of a dataset's active items one run may delete. */
  maxDeleteShare: number;
  allowMassDelete?: boolean;
  /** Compute and return the change set, write nothing. */
  dryRun?: boolean;
  /** Items per staging write; bounds memory and request size. */
  batchSize?: number;
  /**
   * Up to this many changed items per dataset are kept in memory from the validating pass and
   * staged from there (the usual nightly run); more (an initial import) are read again from the
   * upstream snapshot in a second pass, so memory stays bounded either way.
   */
  maxBufferedChanges?: number;
  /** Test seam: runs after the change set is staged and before the commit. */
  afterStaged?: (info: { nextVersion: number }) => Promise<void>;
}

export interface ChangeIds {
  added: string[];
  changed: string[];
  reappeared: string[];
  deleted: string[];
}

export interface SyncResult {
  runId: string;
  outcome: 'committed' | 'unchanged' | 'dry-run';
  previousVersion: number;
  /** The version readers see after the run. */
  currentVersion: number;
  /** Set when this run committed a version. */
  committedVersion: number | null;
  datasets: Record<Dataset, DatasetSummary>;
  sources: Record<Dataset, string>;
  startedAt: Date;
  completedAt: Date;
  /** The event recorded in the outbox (none for a dry run). */
  event?: OutboxEvent;
  /** Only for a dry run: the ids of every change, by kind. */
  changes?: Record<Dataset, ChangeIds>;
  /** Only for a dry run: why the real run would abort (mass-deletion or empty-upstream guards). */
  blockedBy?: string[];
}

interface DatasetPlan {
  dataset: Dataset;
  summary: DatasetSummary;
  /** id -> hash of every item to write as active (added, changed, reappeared). */
  upserts: Map<string, string>;
  /** The validated data of the upserts, kept from the first pass while they are few enough. */
  buffered?: Map<string, { data: unknown; sourceHash?: string }>;
  deleted: Set<string>;
  ids: ChangeIds;
  /** Where the time went, for the log. */
  timings: { readMs: number; waitedForCommittedMs: number; buffered: boolean };
}

const DEFAULT_BATCH_SIZE = 1000;
const DEFAULT_MAX_BUFFERED_CHANGES = 10_000;

/**
 * One synchronisation: read both upstream snapshots, validate every item against the contracts,
 * diff by content hash against the committed state, guard against mass deletion, and apply the
 * change set as version V+1 with one commit write (or record a no-change run).
 *
 * Memory is bounded by the number of ids, not by the data: the first pass over each snapshot keeps
 * id -> hash, plus the data of changed items while they are few (maxBufferedChanges). When there
 * are more, a second pass stages them in batches and checks each hash again, so an upstream file
 * rewritten during the run aborts instead of mixing two files.
 */
export async function runSync(deps: SyncDependencies, options: SyncOptions): Promise<SyncResult> {
  const now = deps.now ?? (() => new Date());
  const log = deps.logger;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const startedAt = now();
  const { runId } = options;

  if (!options.dryRun) {
    // Undo whatever a crashed run staged before anything else reads or writes (single writer).
    const recovered = await deps.store.recover();
    if (recovered.removed + recovered.restored > 0) {
      log.warn({ runId, ...recovered }, 'cleaned up after an interrupted run');
    }
  }
  const state = await deps.store.readState();
  const previousVersion = state.version;
  // Reading the committed state takes seconds at 100k items; it runs while the upstream files are
  // opened and parsed (see planDataset).
  const committedRefs = Object.fromEntries(
    DATASETS.map((d) => [d, loadCommittedRefs(deps.store, d)]),
  ) as Record<Dataset, CommittedRefsLoad>;

  const snapshots: Partial<Record<Dataset, UpstreamSnapshot>> = {};
  try {
    for (const dataset of DATASETS) {
      try {
        snapshots[dataset] = await deps.sources[dataset].open({ logger: log });
      } catch (err) {
        throw new SyncAbortedError(
          'upstream_unavailable',
          `${dataset}: ${(err as Error).message}`,
          {},
          { cause: err },
        );
      }
    }
    const opened = snapshots as Record<Dataset, UpstreamSnapshot>;
    const sources = Object.fromEntries(DATASETS.map((d) => [d, opened[d].description])) as Record<
      Dataset,
      string
    >;

    // Pass 1: validate everything and diff, before writing anything.
    // Both datasets at once: while one waits for its committed refs, the other is parsed.
    const parts = DATASETS.map(() => ({ invalidItems: [], duplicateIds: [] }) as ValidationReport);
    const settled = await Promise.allSettled(
      DATASETS.map((dataset, i) =>
        planDataset(
          dataset,
          opened[dataset],
          committedRefs[dataset],
          parts[i] as ValidationReport,
          options.maxBufferedChanges ?? DEFAULT_MAX_BUFFERED_CHANGES,
        ),
      ),
    );
    // allSettled: when one dataset fails, the other must finish (or fail) before the snapshots close.
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const planned = settled.map((r) => (r as PromiseFulfilledResult<DatasetPlan>).value);
    const plans = Object.fromEntries(planned.map((plan) => [plan.dataset, plan])) as Record<
      Dataset,
      DatasetPlan
    >;
    // The report lists the datasets in their usual order, each in file order.
    const report: ValidationReport = {
      invalidItems: parts.flatMap((part) => part.invalidItems),
      duplicateIds: parts.flatMap((part) => part.duplicateIds),
    };
    const datasets = Object.fromEntries(DATASETS.map((d) => [d, plans[d].summary])) as Record<
      Dataset,
      DatasetSummary
    >;
    if (report.invalidItems.length + report.duplicateIds.length > 0) {
      // The message stays readable in a log line; the full report travels in `details`.
      const lines = formatReport(report, 20);
      throw new SyncAbortedError(
        'invalid_upstream',
        `upstream data rejected, nothing committed: ${report.invalidItems.length} invalid item(s), ` +
          `${report.duplicateIds.length} duplicate id(s)\n  ${lines.join('\n  ')}`,
        { report, datasets },
      );
    }
    // A dry run shows the change set even when a guard would stop the real run, and says so.
    const blockedBy: string[] = [];
    for (const dataset of DATASETS) {
      try {
        guardDeletions(plans[dataset], options, datasets);
      } catch (err) {
        if (!options.dryRun) throw err;
        blockedBy.push((err as Error).message);
      }
    }

    const changedCount = DATASETS.reduce(
      (n, d) => n + plans[d].upserts.size + plans[d].deleted.size,
      0,
    );
    log.info(
      {
        runId,
        previousVersion,
        datasets,
        timings: Object.fromEntries(DATASETS.map((d) => [d, plans[d].timings])),
      },
      changedCount > 0 ? 'change set computed' : 'no change upstream',
    );

    if (options.dryRun) {
      return {
        runId,
        outcome: 'dry-run',
        previousVersion,
        currentVersion: previousVersion,
        committedVersion: null,
        datasets,
        sources,
        startedAt,
        completedAt: now(),
        changes: Object.fromEntries(DATASETS.map((d) => [d, plans[d].ids])) as Record<
          Dataset,
          ChangeIds
        >,
        blockedBy,
      };
    }

    const eventData = (
      changed: boolean,
      currentVersion: number,
      completedAt: Date,
    ): SyncCompletedEventData => ({
      runId,
      previousVersion,
      currentVersion,
      changed,
      datasets: Object.fromEntries(
        DATASETS.map((d) => {
          const s = datasets[d];
          return [d, eventCounts({ counts: { ...s, activeAfter: s.total } })];
        }),
      ) as SyncCompletedEventData['datasets'],
      startedAt: startedAt.toISOString(),
      completedAt: completedAt.toISOString(),
      source: sources,
    });

    if (changedCount === 0) {
      const completedAt = now();
      const event = deps.buildEvent(eventData(false, previousVersion, completedAt), {
        id: syncCompletedEventId(previousVersion, runId),
        time: completedAt,
      });
      await deps.store.recordUnchangedRun(event);
      return {
        runId,
        outcome: 'unchanged',
        previousVersion,
        currentVersion: previousVersion,
        committedVersion: null,
        datasets,
        sources,
        startedAt,
        completedAt,
        event,
      };
    }

    // Pass 2: stage version V+1 (invisible to readers until the commit).
    const nextVersion = previousVersion + 1;
    const committedAt = now();
    for (const dataset of DATASETS) {
      await stageDataset(
        plans[dataset],
        opened[dataset],
        deps.store,
        nextVersion,
        committedAt,
        batchSize,
      );
    }
    log.info({ runId, nextVersion }, 'change set staged');
    await options.afterStaged?.({ nextVersion });

    await deps.assertLeader?.();
    const event = deps.buildEvent(eventData(true, nextVersion, committedAt), {
      id: syncCompletedEventId(nextVersion),
      time: committedAt,
    });
    await deps.store.commit({ expectedVersion: previousVersion, nextVersion, committedAt, event });
    log.info({ runId, version: nextVersion }, 'version committed');
    return {
      runId,
      outcome: 'committed',
      previousVersion,
      currentVersion: nextVersion,
      committedVersion: nextVersion,
      datasets,
      sources,
      startedAt,
      completedAt: committedAt,
      event,
    };
  } catch (err) {
    if (err instanceof SyncAbortedError) err.details.previousVersion ??= previousVersion;
    throw err;
  } finally {
    for (const snapshot of Object.values(snapshots)) {
      await snapshot
        .close()
        .catch((err: unknown) => log.warn({ runId, err }, 'could not close upstream snapshot'));
    }
  }
}

interface ValidItem {
  id: string;
  data: unknown;
  hash: string;
}

/** Validates one upstream record against the dataset's contract. */
function validate(
  dataset: Dataset,
  record: UpstreamRecord,
): { ok: true; item: ValidItem } | { ok: false; bad: InvalidItem } {
  const claimedId =
    record.value !== null &&
    typeof record.value === 'object' &&
    typeof (record.value as { id?: unknown }).id === 'string'
      ? (record.value as { id: string }).id
      : undefined;
  const where = {
    dataset,
    index: record.index,
    ...(record.line !== undefined ? { line: record.line } : {}),
  };
  if (record.error !== undefined) return { ok: false, bad: { ...where, reasons: [record.error] } };
  const parsed = itemDataSchemas[dataset].safeParse(record.value);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) =>
      issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
    );
    return {
      ok: false,
      bad: { ...where, ...(claimedId !== undefined ? { id: claimedId } : {}), reasons },
    };
  }
  const data = parsed.data;
  return { ok: true, item: { id: data.id, data, hash: contentHash(data) } };
}

/**
 * The item, unparsed or unvalidated, when it is exactly what is committed; otherwise undefined
 * (validate it).
 *
 * First by sourceHash: an element whose bytes hash to the committed active state's sourceHash is
 * byte-for-byte the element that state was parsed from, so it is that item, unchanged, and is
 * neither decoded, parsed, validated nor canonicalised (the bulk of a nightly run). An element
 * whose bytes differ (or a source without byte hashes) is parsed, and when its content hash equals
 * its committed, active hash it is unchanged too (reformatted upstream, say) and skips the zod pass.
 *
 * Decision: skipping validation cannot accept anything invalid, since equal bytes or equal hashes
 * mean the exact content that passed the contract when it was committed (and the contracts only
 * check, they do not transform). Every new, changed or reappearing item is still validated, and
 * every item still takes part in duplicate-id detection. A release that makes a contract stricter
 * must not rely on this for old items: it needs a run against an empty committed state, or a data
 * migration.
 */
function unchangedItem(
  record: UpstreamRecord,
  refs: LoadedRefs,
): { ok: true; item: ValidItem } | undefined {
  // (Without committed sourceHashes, e.g. on the initial import, the bytes are not even hashed.)
  const sourceHash = refs.bySourceHash.size > 0 ? record.sourceHash : undefined;
  if (sourceHash !== undefined) {
    const same = refs.bySourceHash.get(sourceHash);
    if (same) return { ok: true, item: { id: same.id, data: undefined, hash: same.hash } };
  }
  if (record.error !== undefined || record.value === null || typeof record.value !== 'object')
    return undefined;
  const id = (record.value as { id?: unknown }).id;
  if (typeof id !== 'string') return undefined;
  const committed = refs.byId.get(id);
  if (!committed || committed.isDeleted) return undefined;
  const hash = contentHash(record.value);
  if (hash !== committed.hash) return undefined;
  return { ok: true, item: { id, data: record.value, hash } };
}

interface CommittedRef {
  id: string;
  hash: string;
  isDeleted: boolean;
}

interface LoadedRefs {
  byId: Map<string, CommittedRef>;
  /** Active items by the sourceHash of their committed data (those that have one). */
  bySourceHash: Map<string, CommittedRef>;
}

interface CommittedRefsLoad {
  done: Promise<CommittedRef[]>;
  /** Set once loading finished. */
  loaded?: LoadedRefs;
}

function loadCommittedRefs(store: SyncStore, dataset: Dataset): CommittedRefsLoad {
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
  const c = changeSet.counts;
  const upserts = new Map<string, string>();
  for (const item of [...changeSet.added, ...changeSet.changed, ...changeSet.reappeared])
    upserts.set(item.id, item.hash);
  return {
    dataset,
    summary: {
      added: c.added,
      changed: c.changed,
      deleted: c.deleted,
      reappeared: c.reappeared,
      unchanged: c.unchanged,
      activeBefore: c.activeBefore,
      total: c.activeAfter,
    },
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

function guardDeletions(
  plan: DatasetPlan,
  options: SyncOptions,
  datasets: Record<Dataset, DatasetSummary>,
): void {
  const { summary, dataset } = plan;
  // An empty upstream never wipes a dataset, not even when forced: that is a broken export, not a decision.
  if (summary.total === 0 && summary.activeBefore > 0) {
    throw new SyncAbortedError(
      'empty_upstream',
      `${dataset}: upstream sent no items while ${summary.activeBefore} are active; refusing to delete them all (nothing committed)`,
      { datasets },
    );
  }
  if (
    !options.allowMassDelete &&
    exceedsDeletionShare(summary.deleted, summary.activeBefore, options.maxDeleteShare)
  ) {
    const share = (deletionShare(summary.deleted, summary.activeBefore) * 100).toFixed(1);
    throw new SyncAbortedError(
      'mass_deletion',
      `${dataset}: the run would delete ${summary.deleted} of ${summary.activeBefore} active items (${share}%), ` +
        `more than the allowed ${(options.maxDeleteShare * 100).toFixed(1)}%; nothing committed. ` +
        'If upstream really removed them, run again with --allow-mass-delete.',
      { datasets },
    );
  }
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

/**
 * The snapshot's records; a file that cannot be read to its end (malformed structure, cut off,
 * read error) aborts the run as invalid upstream instead of failing it as a bug.
 */
async function* readable(
  dataset: Dataset,
  snapshot: UpstreamSnapshot,
): AsyncGenerator<UpstreamRecord> {
  try {
    yield* snapshot.records();
  } catch (err) {
    throw new SyncAbortedError(
      'invalid_upstream',
      `${dataset}: ${(err as Error).message}; nothing committed`,
      {},
      { cause: err },
    );
  }
}

function upstreamChanged(dataset: Dataset, detail: string): SyncAbortedError {
  return new SyncAbortedError(
    'upstream_changed',
    `${dataset}: the upstream file changed while it was being read (${detail}); nothing committed, the next run will pick up the new file`,
  );
}
