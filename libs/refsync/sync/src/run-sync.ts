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
  type ChangeSetCounts,
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
  formatReport,
  isSyncAborted,
  syncAborted,
  type DuplicateId,
  type InvalidItem,
  type SyncAbortedError,
  type ValidationReport,
} from './report';

export interface SyncDependencies {
  store: SyncStore;
  sources: Record<Dataset, UpstreamSource>;
  /** Builds the outbox entry (the full CloudEvent) for the event data; the id is decided here. */
  buildEvent(data: SyncCompletedEventData, options: { id: string; time: Date }): OutboxEvent;
  /** Confirms (and extends) the single-writer lease; throws when it is lost. */
  assertLeader?(): Promise<void>;
  /** The run's logger: its lines already carry the run id, so the sync never adds it again. */
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
  datasets: Record<Dataset, ChangeSetCounts>;
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

/** What every step of one run shares. */
interface RunContext {
  deps: SyncDependencies;
  options: SyncOptions;
  log: SyncLogger;
  now: () => Date;
  startedAt: Date;
  previousVersion: number;
}

/** The validated, diffed upstream of both datasets: what the guards judge and the commit writes. */
interface Plan {
  snapshots: Record<Dataset, UpstreamSnapshot>;
  plans: Record<Dataset, DatasetPlan>;
  datasets: Record<Dataset, ChangeSetCounts>;
  sources: Record<Dataset, string>;
}

const DEFAULT_BATCH_SIZE = 1000;
const DEFAULT_MAX_BUFFERED_CHANGES = 10_000;

const byDataset = <T>(value: (dataset: Dataset) => T) =>
  Object.fromEntries(DATASETS.map((d) => [d, value(d)])) as Record<Dataset, T>;

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
  const startedAt = now();
  if (!options.dryRun) await recoverInterruptedRun(deps);
  const { version: previousVersion } = await deps.store.readState();
  const run: RunContext = { deps, options, log: deps.logger, now, startedAt, previousVersion };

  // Reading the committed state takes seconds at 100k items; it runs while the upstream files are
  // opened and parsed (see planDataset).
  const committedRefs = byDataset((d) => loadCommittedRefs(deps.store, d));
  const opened: Partial<Record<Dataset, UpstreamSnapshot>> = {};
  try {
    const snapshots = await openSnapshots(run, opened);
    const plan = await planChangeSet(run, snapshots, committedRefs);
    const blockedBy = guard(run, plan);
    if (options.dryRun) return dryRunResult(run, plan, blockedBy);
    if (!hasChanges(plan)) return await recordUnchanged(run, plan);
    return await stageAndCommit(run, plan);
  } catch (err) {
    if (isSyncAborted(err)) err.details.previousVersion ??= previousVersion;
    throw err;
  } finally {
    await closeSnapshots(run, opened);
  }
}

/** Undoes whatever a crashed run staged, before anything else reads or writes (single writer). */
async function recoverInterruptedRun(deps: SyncDependencies): Promise<void> {
  const recovered = await deps.store.recover();
  if (recovered.removed + recovered.restored > 0) {
    deps.logger.warn({ ...recovered }, 'cleaned up after an interrupted run');
  }
}

/** Opens every dataset's upstream; each one opened is put in `opened` at once, for closing. */
async function openSnapshots(
  run: RunContext,
  opened: Partial<Record<Dataset, UpstreamSnapshot>>,
): Promise<Record<Dataset, UpstreamSnapshot>> {
  for (const dataset of DATASETS) {
    try {
      opened[dataset] = await run.deps.sources[dataset].open({
        logger: run.log,
        runId: run.options.runId,
      });
    } catch (err) {
      throw syncAborted(
        'upstream_unavailable',
        `${dataset}: ${(err as Error).message}`,
        {},
        { cause: err },
      );
    }
  }
  return opened as Record<Dataset, UpstreamSnapshot>;
}

async function closeSnapshots(
  run: RunContext,
  opened: Partial<Record<Dataset, UpstreamSnapshot>>,
): Promise<void> {
  for (const snapshot of Object.values(opened)) {
    await snapshot
      .close()
      .catch((err: unknown) => run.log.warn({ err }, 'could not close upstream snapshot'));
  }
}

/**
 * Pass 1: validates everything and diffs it, before anything is written. Both datasets at once:
 * while one waits for its committed refs, the other is parsed. Any invalid item or duplicate id
 * aborts the run with a report naming each one.
 */
async function planChangeSet(
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

/**
 * The deletion guards. A real run stops at the first one that fails; a dry run shows the change
 * set anyway and returns why the real run would stop.
 */
function guard(run: RunContext, plan: Plan): string[] {
  const blockedBy: string[] = [];
  for (const dataset of DATASETS) {
    try {
      guardDeletions(plan.plans[dataset], run.options, plan.datasets);
    } catch (err) {
      if (!run.options.dryRun) throw err;
      blockedBy.push((err as Error).message);
    }
  }
  run.log.info(
    {
      previousVersion: run.previousVersion,
      datasets: plan.datasets,
      timings: byDataset((d) => plan.plans[d].timings),
    },
    hasChanges(plan) ? 'change set computed' : 'no change upstream',
  );
  return blockedBy;
}

function hasChanges(plan: Plan): boolean {
  return DATASETS.some((d) => plan.plans[d].upserts.size + plan.plans[d].deleted.size > 0);
}

function dryRunResult(run: RunContext, plan: Plan, blockedBy: string[]): SyncResult {
  return {
    ...resultBase(run, plan),
    outcome: 'dry-run',
    currentVersion: run.previousVersion,
    committedVersion: null,
    completedAt: run.now(),
    changes: byDataset((d) => plan.plans[d].ids),
    blockedBy,
  };
}

/** No change: the version stays, and an event with zero counts is recorded for downstream. */
async function recordUnchanged(run: RunContext, plan: Plan): Promise<SyncResult> {
  const completedAt = run.now();
  const event = run.deps.buildEvent(
    eventData(run, plan, { changed: false, currentVersion: run.previousVersion, completedAt }),
    { id: syncCompletedEventId(run.previousVersion, run.options.runId), time: completedAt },
  );
  await run.deps.store.recordUnchangedRun(event);
  return {
    ...resultBase(run, plan),
    outcome: 'unchanged',
    currentVersion: run.previousVersion,
    committedVersion: null,
    completedAt,
    event,
  };
}

/**
 * Pass 2: stages version V+1 (invisible to readers), confirms the lease, then commits it with its
 * event in one write.
 */
async function stageAndCommit(run: RunContext, plan: Plan): Promise<SyncResult> {
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

  await deps.assertLeader?.();
  const event = deps.buildEvent(
    eventData(run, plan, { changed: true, currentVersion: nextVersion, completedAt: committedAt }),
    { id: syncCompletedEventId(nextVersion), time: committedAt },
  );
  await deps.store.commit({ expectedVersion: previousVersion, nextVersion, committedAt, event });
  log.info({ version: nextVersion }, 'version committed');
  return {
    ...resultBase(run, plan),
    outcome: 'committed',
    currentVersion: nextVersion,
    committedVersion: nextVersion,
    completedAt: committedAt,
    event,
  };
}

function resultBase(run: RunContext, plan: Plan) {
  return {
    runId: run.options.runId,
    previousVersion: run.previousVersion,
    datasets: plan.datasets,
    sources: plan.sources,
    startedAt: run.startedAt,
  };
}

function eventData(
  run: RunContext,
  plan: Plan,
  outcome: { changed: boolean; currentVersion: number; completedAt: Date },
): SyncCompletedEventData {
  return {
    runId: run.options.runId,
    previousVersion: run.previousVersion,
    currentVersion: outcome.currentVersion,
    changed: outcome.changed,
    datasets: byDataset((d) =>
      eventCounts({ counts: plan.datasets[d] }),
    ) as SyncCompletedEventData['datasets'],
    startedAt: run.startedAt.toISOString(),
    completedAt: outcome.completedAt.toISOString(),
    source: plan.sources,
  };
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

function guardDeletions(
  plan: DatasetPlan,
  options: SyncOptions,
  datasets: Record<Dataset, ChangeSetCounts>,
): void {
  const { counts, dataset } = plan;
  // An empty upstream never wipes a dataset, not even when forced: that is a broken export, not a decision.
  if (counts.activeAfter === 0 && counts.activeBefore > 0) {
    throw syncAborted(
      'empty_upstream',
      `${dataset}: upstream sent no items while ${counts.activeBefore} are active; refusing to delete them all (nothing committed)`,
      { datasets },
    );
  }
  if (
    !options.allowMassDelete &&
    exceedsDeletionShare(counts.deleted, counts.activeBefore, options.maxDeleteShare)
  ) {
    const share = (deletionShare(counts.deleted, counts.activeBefore) * 100).toFixed(1);
    throw syncAborted(
      'mass_deletion',
      `${dataset}: the run would delete ${counts.deleted} of ${counts.activeBefore} active items (${share}%), ` +
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
    throw syncAborted(
      'invalid_upstream',
      `${dataset}: ${(err as Error).message}; nothing committed`,
      {},
      { cause: err },
    );
  }
}

function upstreamChanged(dataset: Dataset, detail: string): SyncAbortedError {
  return syncAborted(
    'upstream_changed',
    `${dataset}: the upstream file changed while it was being read (${detail}); nothing committed, the next run will pick up the new file`,
  );
}
