import { randomUUID } from 'node:crypto';
import type { Dataset } from '@nhp/refsync-contracts';
import type {
  ImportRunTrigger,
  Lease,
  LeaseRepository,
  RefsyncWriteRepository,
  RunRepository,
} from '@nhp/refsync-data-access';
import type { ChangeSetCounts } from '@nhp/refsync-domain';
import {
  formatReport,
  isSyncAborted,
  runSync,
  type ChangeIds,
  type UpstreamSource,
} from '@nhp/refsync-sync';
import { isAppError } from '@nhp/shared-errors';
import type { Logger } from '@nhp/shared-logger';
import { failSpan, inSpan } from '@nhp/shared-tracing';
import { buildSyncCompletedOutboxEvent } from './events';
import { acquireLease, type HeldLease } from './leader';
import type { ImporterMetrics } from './metrics';

export type RunOutcome = 'committed' | 'unchanged' | 'dry-run' | 'aborted' | 'failed' | 'skipped';

export interface RunRequest {
  trigger: ImportRunTrigger;
  dryRun?: boolean;
  allowMassDelete?: boolean;
}

export interface RunReport {
  runId: string;
  trigger: ImportRunTrigger;
  dryRun: boolean;
  outcome: RunOutcome;
  startedAt: Date;
  endedAt: Date;
  previousVersion: number | null;
  committedVersion: number | null;
  datasets: Record<Dataset, ChangeSetCounts> | null;
  sources: Record<Dataset, string>;
  /** Dry run only: every change by kind, and why the real run would stop. */
  changes?: Record<Dataset, ChangeIds>;
  blockedBy?: string[];
  error?: { reason: string; message: string; details?: string[] };
  /** Skipped runs: who holds the lease. */
  heldBy?: Lease | null;
}

export interface ImporterOptions {
  writeRepo: RefsyncWriteRepository;
  runs: RunRepository;
  leases: LeaseRepository;
  sources: Record<Dataset, UpstreamSource>;
  logger: Logger;
  /** This process, as lease holder and in run records. */
  instance: string;
  maxDeleteShare: number;
  leaseTtlMs: number;
  metrics?: ImporterMetrics;
  /** Called after every run that recorded an event (the worker's publisher publishes at once). */
  onEventRecorded?: () => void;
  batchSize?: number;
  /** Test seam, see SyncOptions.afterStaged. */
  afterStaged?: (info: { nextVersion: number; runId: string }) => Promise<void>;
  /** The clock of run records and of the lease (tests let a lease expire by moving it). */
  now?: () => Date;
}

/**
 * Runs synchronisations: one at a time in this process, and, through the MongoDB lease, one at a
 * time across every importer instance. Every run gets an id, a run record and log lines carrying
 * that id, whatever its outcome.
 */
export function createImporter(options: ImporterOptions) {
  const { runs, leases, logger, metrics } = options;
  const now = options.now ?? (() => new Date());
  const sourceDescriptions = Object.fromEntries(
    Object.entries(options.sources).map(([dataset, source]) => [dataset, source.description]),
  ) as Record<Dataset, string>;
  let active: { runId: string; done: Promise<RunReport> } | undefined;

  async function execute(runId: string, request: RunRequest): Promise<RunReport> {
    const log = logger.child({ runId });
    const dryRun = request.dryRun ?? false;
    const startedAt = now();
    const base = {
      runId,
      trigger: request.trigger,
      dryRun,
      startedAt,
      sources: sourceDescriptions,
    };

    let lease: HeldLease | undefined;
    if (!dryRun) {
      const attempt = await acquireLease(leases, {
        holder: options.instance,
        ttlMs: options.leaseTtlMs,
        logger: log,
        now,
      });
      if (!attempt.acquired) {
        const heldBy = attempt.heldBy;
        const message = `another importer instance (${heldBy?.holder ?? 'unknown'}) holds the lease until ${heldBy?.expiresAt.toISOString() ?? 'unknown'}`;
        log.warn(
          { holder: heldBy?.holder, expiresAt: heldBy?.expiresAt },
          `run skipped: ${message}`,
        );
        const report: RunReport = {
          ...base,
          outcome: 'skipped',
          endedAt: now(),
          previousVersion: null,
          committedVersion: null,
          datasets: null,
          error: { reason: 'lease_held', message },
          heldBy,
        };
        await runs
          .record({
            runId,
            trigger: request.trigger,
            dryRun,
            instance: options.instance,
            startedAt,
            outcome: 'skipped',
            endedAt: report.endedAt,
            error: report.error ?? null,
          })
          .catch((err: unknown) => log.warn({ err }, 'could not record the skipped run'));
        observe(report);
        return report;
      }
      lease = attempt.lease;
    }

    let report: RunReport;
    try {
      await runs.start({
        runId,
        trigger: request.trigger,
        dryRun,
        instance: options.instance,
        startedAt,
      });
      if (!dryRun) {
        const interrupted = await runs.markInterrupted(runId, now());
        if (interrupted > 0)
          log.warn(
            { interrupted },
            'earlier run(s) never finished (the importer stopped); marked interrupted',
          );
      }
      log.info(
        {
          trigger: request.trigger,
          dryRun,
          allowMassDelete: request.allowMassDelete ?? false,
          sources: sourceDescriptions,
        },
        'run started',
      );
      const heldLease = lease;
      const afterStaged = options.afterStaged;
      const result = await runSync(
        {
          store: options.writeRepo,
          sources: options.sources,
          // The event carries the run id as its request id (CloudEvents `requestid`).
          buildEvent: (data, eventOptions) =>
            buildSyncCompletedOutboxEvent(data, { ...eventOptions, requestId: runId }),
          assertLeader: heldLease ? () => heldLease.assertHeld() : undefined,
          logger: log,
          now,
        },
        {
          runId,
          maxDeleteShare: options.maxDeleteShare,
          allowMassDelete: request.allowMassDelete,
          dryRun,
          batchSize: options.batchSize,
          afterStaged: afterStaged ? (info) => afterStaged({ ...info, runId }) : undefined,
        },
      );
      report = {
        ...base,
        outcome: result.outcome,
        endedAt: now(),
        previousVersion: result.previousVersion,
        committedVersion: result.committedVersion,
        datasets: result.datasets,
        ...(result.changes ? { changes: result.changes } : {}),
        ...(result.blockedBy ? { blockedBy: result.blockedBy } : {}),
      };
    } catch (err) {
      report = failureReport(base, err, now());
      if (report.outcome === 'failed') log.error({ err }, 'run failed');
    } finally {
      await lease
        ?.release()
        .catch((err: unknown) => log.warn({ err }, 'could not release the importer lease'));
    }

    await runs
      .finish(runId, {
        outcome: report.outcome,
        endedAt: report.endedAt,
        previousVersion: report.previousVersion,
        committedVersion: report.committedVersion,
        datasets: report.datasets,
        error: report.error ?? null,
      })
      .catch((err: unknown) => log.warn({ err }, 'could not record the run result'));

    observe(report);
    const summary = {
      outcome: report.outcome,
      previousVersion: report.previousVersion,
      committedVersion: report.committedVersion,
      datasets: report.datasets,
      durationMs: report.endedAt.getTime() - startedAt.getTime(),
    };
    if (report.outcome === 'aborted') {
      log.warn(
        { ...summary, reason: report.error?.reason, details: report.error?.details?.slice(0, 100) },
        `run aborted: ${report.error?.message}`,
      );
    } else if (report.outcome !== 'failed') {
      log.info(summary, `run finished: ${report.outcome}`);
    }

    if (report.outcome === 'committed' || report.outcome === 'unchanged')
      options.onEventRecorded?.();
    if (report.outcome === 'committed') {
      // Housekeeping after the run is recorded: a failure here changes nothing readers see.
      try {
        const pruned = await options.writeRepo.prune();
        if (pruned > 0) log.info({ pruned }, 'superseded item versions pruned');
      } catch (err) {
        log.warn({ err }, 'prune failed; the next committed run tries again');
      }
    }
    return report;
  }

  /**
   * The run in its span (a child of the request that asked for it, if any): its commit records
   * the event with this span's context, so the event and what each refsync-api instance does with
   * it join the run's trace.
   */
  function traced(runId: string, request: RunRequest): Promise<RunReport> {
    return inSpan(
      'refsync-importer run',
      {
        attributes: {
          'refsync.run_id': runId,
          'refsync.run.trigger': request.trigger,
          'refsync.run.dry_run': request.dryRun ?? false,
        },
      },
      async (span) => {
        const report = await execute(runId, request);
        span.setAttribute('refsync.run.outcome', report.outcome);
        if (report.committedVersion !== null) {
          span.setAttribute('refsync.run.committed_version', report.committedVersion);
        }
        if (report.outcome === 'failed') failSpan(span, { name: report.error?.reason ?? 'failed' });
        return report;
      },
    );
  }

  function observe(report: RunReport): void {
    if (!metrics) return;
    metrics.runs.inc({ outcome: report.outcome });
    if (report.outcome === 'aborted' && report.error) {
      metrics.aborted.inc({ reason: report.error.reason });
    }
    metrics.duration.observe(
      { outcome: report.outcome },
      (report.endedAt.getTime() - report.startedAt.getTime()) / 1000,
    );
    if (report.outcome === 'committed' && report.datasets) {
      for (const [dataset, s] of Object.entries(report.datasets)) {
        for (const kind of ['added', 'changed', 'deleted', 'reappeared'] as const) {
          if (s[kind] > 0) metrics.items.inc({ dataset, kind }, s[kind]);
        }
      }
    }
  }

  return {
    /** The id of the run in progress in this process, if any. */
    get activeRunId(): string | undefined {
      return active?.runId;
    },

    /** Starts a run unless one is in progress here; returns at once. */
    begin(request: RunRequest): { runId: string; done: Promise<RunReport> } | { busy: string } {
      if (active) return { busy: active.runId };
      const runId = randomUUID();
      const done = traced(runId, request).finally(() => {
        active = undefined;
      });
      active = { runId, done };
      return active;
    },

    /** Runs now and resolves with the report; when a run is in progress here, reports it as skipped. */
    async run(request: RunRequest): Promise<RunReport> {
      const started = this.begin(request);
      if ('done' in started) return started.done;
      const at = now();
      logger.warn(
        { activeRunId: started.busy, trigger: request.trigger },
        'run skipped: a run is already in progress in this process',
      );
      return {
        runId: randomUUID(),
        trigger: request.trigger,
        dryRun: request.dryRun ?? false,
        outcome: 'skipped',
        startedAt: at,
        endedAt: at,
        previousVersion: null,
        committedVersion: null,
        datasets: null,
        sources: sourceDescriptions,
        error: { reason: 'busy', message: `run ${started.busy} is in progress` },
      };
    },

    /** Waits for the run in progress, if any (graceful shutdown). */
    async idle(): Promise<void> {
      await active?.done.catch(() => undefined);
    },
  };
}

export type Importer = ReturnType<typeof createImporter>;

function failureReport(
  base: Pick<RunReport, 'runId' | 'trigger' | 'dryRun' | 'startedAt' | 'sources'>,
  err: unknown,
  endedAt: Date,
): RunReport {
  const common = { ...base, endedAt, previousVersion: null, committedVersion: null };
  if (isSyncAborted(err)) {
    const { reason, report, datasets, previousVersion } = err.details;
    const details = report ? formatReport(report) : undefined;
    return {
      ...common,
      previousVersion: previousVersion ?? null,
      outcome: 'aborted',
      datasets: (datasets as Record<Dataset, ChangeSetCounts> | undefined) ?? null,
      error: { reason, message: err.message, ...(details ? { details } : {}) },
    };
  }
  // An AppError says what failed by its code (e.g. DATABASE_UNAVAILABLE); anything else is a bug.
  const reason = isAppError(err) ? err.code : err instanceof Error ? err.name : 'error';
  return {
    ...common,
    outcome: 'failed',
    datasets: null,
    error: { reason, message: err instanceof Error ? err.message : String(err) },
  };
}
