import type { Dataset } from '@nhp/refsync-contracts';
import { loadCommittedRefs } from './committed-refs';
import { commitStaged, recordUnchanged } from './commit';
import { guard } from './guard';
import { hasChanges, planChangeSet } from './plan';
import type { UpstreamSnapshot } from './ports';
import { isSyncAborted } from './report';
import { dryRunResult } from './result';
import { stageChangeSet } from './stage';
import {
  byDataset,
  type RunContext,
  type SyncDependencies,
  type SyncOptions,
  type SyncResult,
} from './types';
import { closeSnapshots, openSnapshots } from './upstream';

export type { ChangeIds, SyncDependencies, SyncOptions, SyncResult } from './types';

/**
 * One synchronisation: read both upstream snapshots, validate every item against the contracts,
 * diff by content hash against the committed state (./plan), guard against mass deletion
 * (./guard), and apply the change set as version V+1 (./stage) with one commit write (./commit),
 * or record a no-change run.
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
  // opened and parsed (see planChangeSet).
  const committedRefs = byDataset((d) => loadCommittedRefs(deps.store, d));
  const opened: Partial<Record<Dataset, UpstreamSnapshot>> = {};
  try {
    const snapshots = await openSnapshots(run, opened);
    const plan = await planChangeSet(run, snapshots, committedRefs);
    const blockedBy = guard(run, plan);
    if (options.dryRun) return dryRunResult(run, plan, blockedBy);
    if (!hasChanges(plan)) return await recordUnchanged(run, plan);
    const staged = await stageChangeSet(run, plan);
    return await commitStaged(run, plan, staged);
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
