/** The parts of a SyncResult every outcome shares, and the whole result of a dry run. */
import type { Plan } from './plan';
import { byDataset, type RunContext, type SyncResult } from './types';

/** A dry run writes nothing: the change set, by id, and why a real run would stop. */
export function dryRunResult(run: RunContext, plan: Plan, blockedBy: string[]): SyncResult {
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

export function resultBase(run: RunContext, plan: Plan) {
  return {
    runId: run.options.runId,
    previousVersion: run.previousVersion,
    datasets: plan.datasets,
    sources: plan.sources,
    startedAt: run.startedAt,
  };
}
