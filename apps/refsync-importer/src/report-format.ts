import { DATASETS } from '@nhp/refsync-contracts';
import type { ImportRun } from '@nhp/refsync-data-access';
import type { ChangeSetCounts } from '@nhp/refsync-domain';
import type { RunReport } from '@nhp/refsync-import';

const pad = (value: string, width: number) => value.padEnd(width);

function countsLine(s: ChangeSetCounts): string {
  return `+${s.added} added, ~${s.changed} changed, -${s.deleted} deleted, ^${s.reappeared} reappeared, ${s.activeAfter} active`;
}

/** What `--once` and `--dry-run` print: the outcome, per-dataset counts, and for a dry run every change. */
export function formatRunReport(report: RunReport): string[] {
  const seconds = ((report.endedAt.getTime() - report.startedAt.getTime()) / 1000).toFixed(2);
  const lines: string[] = [];
  switch (report.outcome) {
    case 'committed':
      lines.push(
        `run ${report.runId} committed version ${report.committedVersion} (previous ${report.previousVersion}) in ${seconds} s`,
      );
      break;
    case 'unchanged':
      lines.push(
        `run ${report.runId} found nothing to commit; version stays ${report.previousVersion} (${seconds} s)`,
      );
      break;
    case 'dry-run':
      lines.push(
        `dry run ${report.runId} at version ${report.previousVersion}: nothing was written (${seconds} s)`,
      );
      break;
    default:
      lines.push(
        `run ${report.runId} ${report.outcome}: ${report.error?.message ?? 'unknown error'}`,
      );
  }
  if (report.datasets) {
    for (const dataset of DATASETS) {
      const s = report.datasets[dataset];
      if (s)
        lines.push(`  ${pad(`${dataset}:`, 20)} ${countsLine(s)}   (${report.sources[dataset]})`);
    }
  }
  if (
    report.outcome !== 'committed' &&
    report.outcome !== 'unchanged' &&
    report.outcome !== 'dry-run' &&
    report.error?.details
  ) {
    lines.push(
      `  ${report.error.details.length} problem(s):`,
      ...report.error.details.map((d) => `    ${d}`),
    );
  }
  if (report.changes) {
    for (const dataset of DATASETS) {
      const c = report.changes[dataset];
      const total = c.added.length + c.changed.length + c.deleted.length + c.reappeared.length;
      lines.push(`${dataset}: ${total} change(s)`);
      for (const id of c.added) lines.push(`  + ${id}`);
      for (const id of c.changed) lines.push(`  ~ ${id}`);
      for (const id of c.reappeared) lines.push(`  ^ ${id}`);
      for (const id of c.deleted) lines.push(`  - ${id}`);
    }
  }
  for (const reason of report.blockedBy ?? []) lines.push(`a real run would abort: ${reason}`);
  return lines;
}

/** `--history`: one line per run, newest first. */
export function formatHistory(runs: ImportRun[]): string[] {
  if (runs.length === 0) return ['no importer runs recorded yet'];
  const header = `${pad('started (UTC)', 25)}${pad('run id', 38)}${pad('trigger', 10)}${pad('outcome', 13)}${pad('version', 10)}${pad('duration', 10)}changes`;
  const lines = [header];
  for (const run of runs) {
    const duration = run.endedAt
      ? `${((run.endedAt.getTime() - run.startedAt.getTime()) / 1000).toFixed(1)}s`
      : '-';
    const version =
      run.committedVersion !== null
        ? `${run.previousVersion ?? '?'}→${run.committedVersion}`
        : run.previousVersion !== null
          ? `${run.previousVersion}`
          : '-';
    const changes = run.datasets
      ? Object.entries(run.datasets)
          .map(([d, c]) => `${d} +${c.added} ~${c.changed} -${c.deleted} ^${c.reappeared}`)
          .join('; ')
      : '';
    const outcome = run.dryRun && run.outcome !== 'dry-run' ? `${run.outcome}*` : run.outcome;
    lines.push(
      `${pad(run.startedAt.toISOString(), 25)}${pad(run.runId, 38)}${pad(run.trigger, 10)}${pad(outcome, 13)}${pad(version, 10)}${pad(duration, 10)}${changes}`,
    );
    if (run.error && run.outcome !== 'committed')
      lines.push(`${' '.repeat(25)}└ ${run.error.message.split('\n')[0]}`);
  }
  return lines;
}
