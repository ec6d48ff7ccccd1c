import { SYNC_COMPLETED_EVENT_TYPE } from '@nhp/refsync-contracts';
import {
  connectionGauges,
  createAppMetrics,
  eventCounters,
  HttpMetrics,
  outboxGauges,
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
  for (const outcome of ['committed', 'unchanged', 'dry-run', 'aborted', 'failed', 'skipped'])
    runs.inc({ outcome }, 0);
  return { registry, http, events, runs, items, duration, lastCommittedVersion };
}

export type ImporterMetrics = ReturnType<typeof createImporterMetrics>;
