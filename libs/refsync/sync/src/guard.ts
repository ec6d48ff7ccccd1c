/**
 * The deletion guards: an empty upstream never wipes a dataset, and a run deletes no larger share
 * of a dataset than allowed unless told to.
 */
import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import { deletionShare, exceedsDeletionShare, type ChangeSetCounts } from '@nhp/refsync-domain';
import { hasChanges, type DatasetPlan, type Plan } from './plan';
import { syncAborted } from './report';
import { byDataset, type RunContext, type SyncOptions } from './types';

/**
 * A real run stops at the first guard that fails; a dry run shows the change set anyway and
 * returns why the real run would stop.
 */
export function guard(run: RunContext, plan: Plan): string[] {
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
