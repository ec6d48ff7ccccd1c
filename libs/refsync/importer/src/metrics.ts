import { SYNC_COMPLETED_EVENT_TYPE } from '@nhp/refsync-contracts';
import type { Lease } from '@nhp/refsync-data-access';
import type { AbortReason } from '@nhp/refsync-sync';
import {
  connectionGauges,
  createAppMetrics,
  eventCounters,
  HttpMetrics,
  outboxGauges,
  readinessGauge,
  type OutboxBacklog,
} from '@nhp/shared-metrics';
import { Counter, Gauge, Histogram } from 'prom-client';

export interface MetricsSources {
  /** Read at scrape time, so the figures are right even when another instance did the work. */
  lastCommittedVersion(): Promise<number>;
  /** The outbox's pending events and the oldest one's time, read at scrape time. */
  outboxBacklog(): Promise<OutboxBacklog>;
  /** Whether the NATS connection is up now (a NATS outage delays events, it does not stop syncs). */
  natsConnected?(): boolean;
  /** Whether the MongoDB connection is up now, as the driver knows it. */
  mongodbConnected?(): boolean;
  /** When the latest run (of any instance) that committed or found nothing to change ended. */
  lastSuccessAt?(): Promise<Date | null>;
  /** The single-leader lease as stored (null before any run took it). */
  lease?(): Promise<Lease | null>;
  now?(): number;
}

/** Why runs stop on purpose (refsync-sync's reasons), each shown from 0 so an alert can rate it. */
const ABORT_REASONS = [
  'upstream_unavailable',
  'invalid_upstream',
  'empty_upstream',
  'mass_deletion',
  'upstream_changed',
  'lease_lost',
] as const satisfies readonly AbortReason[];

/** A database read of a scrape is given up after this long (the gauge keeps its last value). */
const SCRAPE_READ_TIMEOUT_MS = 1000;

/** `read()`, or undefined when it fails or takes longer than SCRAPE_READ_TIMEOUT_MS. */
function boundedRead<T>(read: () => Promise<T>): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), SCRAPE_READ_TIMEOUT_MS);
    timer.unref();
    read().then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

/**
 * Seconds since the lease expired while its holder had not released it (a release sets the expiry
 * to the release time, `renewedAt`): the holder stopped renewing, having died or stalled, and no
 * instance has taken the lease since. 0 while it is held and renewed, or released.
 */
export function leaseOverdueSeconds(lease: Lease | null, nowMs: number): number {
  if (!lease) return 0;
  const expires = lease.expiresAt.getTime();
  const released = expires <= lease.renewedAt.getTime();
  return released || nowMs <= expires ? 0 : (nowMs - expires) / 1000;
}

/**
 * The importer's Prometheus metrics (README, "Metrics"): the shared request, connection, outbox
 * and event metrics under `refsync_importer_` (@nhp/shared-metrics), and its runs. On a registry
 * of its own (not prom-client's global one) so that tests and several importers in one process
 * never share counters.
 */
export function createImporterMetrics(
  sources?: MetricsSources,
  options: { defaultMetrics?: boolean } = {},
) {
  const app = createAppMetrics('refsync_importer', options);
  const registry = app.registry;
  const http = new HttpMetrics(app);
  const events = eventCounters(app, [SYNC_COMPLETED_EVENT_TYPE]);
  if (sources) {
    connectionGauges(app, { mongodb: sources.mongodbConnected, nats: sources.natsConnected });
    outboxGauges(app, { read: () => sources.outboxBacklog() });
  }
  const runs = new Counter({
    name: app.name('runs_total'),
    help: 'Importer runs by outcome (committed, unchanged, dry-run, aborted, failed, skipped).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const items = new Counter({
    name: app.name('items_total'),
    help: 'Items written by committed runs, by dataset and change kind (added, changed, deleted, reappeared).',
    labelNames: ['dataset', 'kind'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: app.name('run_duration_seconds'),
    help: 'Duration of importer runs, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
    registers: [registry],
  });
  const lastCommittedVersion = new Gauge({
    name: app.name('last_committed_version'),
    help: 'The committed refsync data version.',
    registers: [registry],
    async collect() {
      if (!sources) return;
      try {
        this.set(await sources.lastCommittedVersion());
      } catch {
        // MongoDB unreachable: keep the last value rather than fail the whole scrape.
      }
    },
  });
  const aborted = new Counter({
    name: app.name('aborted_runs_total'),
    help: 'Runs stopped on purpose, nothing committed, by reason (mass_deletion: the mass-deletion guard refused the run; upstream_unavailable, invalid_upstream, empty_upstream, upstream_changed, lease_lost).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ABORT_REASONS) aborted.inc({ reason }, 0);
  if (sources?.lastSuccessAt) {
    const read = sources.lastSuccessAt;
    new Gauge({
      name: app.name('last_success_timestamp_seconds'),
      help: 'When the latest run of any instance that committed a version or found nothing to change ended (Unix seconds; 0 before the first); read at scrape time.',
      registers: [registry],
      async collect() {
        const at = await boundedRead(read);
        if (at !== undefined) this.set(at ? at.getTime() / 1000 : 0);
      },
    });
  }
  if (sources?.lease) {
    const read = sources.lease;
    const now = sources.now ?? Date.now;
    new Gauge({
      name: app.name('lease_overdue_seconds'),
      help: 'Seconds since the importer lease expired without its holder releasing it (the holder stopped renewing: died or stalled), 0 while it is renewed or released; read at scrape time.',
      registers: [registry],
      async collect() {
        const lease = await boundedRead(read);
        if (lease !== undefined) this.set(leaseOverdueSeconds(lease, now()));
      },
    });
  }
  for (const outcome of ['committed', 'unchanged', 'dry-run', 'aborted', 'failed', 'skipped'])
    runs.inc({ outcome }, 0);
  let watchingReadiness = false;
  return {
    registry,
    http,
    events,
    runs,
    aborted,
    items,
    duration,
    lastCommittedVersion,
    /** `refsync_importer_ready`, once the probe server's readiness exists (later calls ignored). */
    watchReadiness(ready: () => Promise<boolean>): void {
      if (watchingReadiness) return;
      watchingReadiness = true;
      readinessGauge(app, ready);
    },
  };
}

export type ImporterMetrics = ReturnType<typeof createImporterMetrics>;
