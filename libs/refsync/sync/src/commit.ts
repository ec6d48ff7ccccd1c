/**
 * The end of a run that writes: the staged version made visible with its event in one write, or,
 * when nothing changed, the event of an unchanged run recorded while the version stays.
 */
import { syncCompletedEventId, type SyncCompletedEventData } from '@nhp/refsync-contracts';
import { eventCounts } from '@nhp/refsync-domain';
import type { Plan } from './plan';
import type { Staged } from './stage';
import { resultBase } from './result';
import { byDataset, type RunContext, type SyncResult } from './types';

/** Confirms the lease, then commits the staged version with its event in one write. */
export async function commitStaged(
  run: RunContext,
  plan: Plan,
  { nextVersion, committedAt }: Staged,
): Promise<SyncResult> {
  const { deps, log, previousVersion } = run;
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

/** No change: the version stays, and an event with zero counts is recorded for downstream. */
export async function recordUnchanged(run: RunContext, plan: Plan): Promise<SyncResult> {
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
