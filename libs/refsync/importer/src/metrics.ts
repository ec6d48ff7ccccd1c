import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsSources {
  /** Read at scrape time, so the figures are right even when another instance did the work. */
  lastCommittedVersion(): Promise<number>;
  pendingEvents(): Promise<number>;
  /** Whether the NATS connection is up now (a NATS outage delays events, it does not stop syncs). */
  natsConnected?(): boolean;
}

/**
 * The importer's Prometheus metrics, on a registry of its own (not prom-client's global one) so
 * that tests and several importers in one process never share counters.
 */
export function createImporterMetrics(sources?: MetricsSources) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const runs = new Counter({
    name: 'refsync_importer_runs_total',
    help: 'Importer runs by outcome (committed, unchanged, dry-run, aborted, failed, skipped).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const items = new Counter({
    name: 'refsync_importer_items_total',
    help: 'Items written by committed runs, by dataset and change kind (added, changed, deleted, reappeared).',
    labelNames: ['dataset', 'kind'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'refsync_importer_run_duration_seconds',
    help: 'Duration of importer runs, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
    registers: [registry],
  });
  const lastCommittedVersion = new Gauge({
    name: 'refsync_importer_last_committed_version',
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
  const pendingEvents = new Gauge({
    name: 'refsync_importer_pending_events',
    help: 'sync-completed events recorded in the outbox and not yet acknowledged by JetStream.',
    registers: [registry],
    async collect() {
      if (!sources) return;
      try {
        this.set(await sources.pendingEvents());
      } catch {
        // as above
      }
    },
  });
  const natsConnected = new Gauge({
    name: 'refsync_importer_nats_connected',
    help: '1 while the NATS connection is up; 0 during an outage (events wait in the outbox).',
    registers: [registry],
    collect() {
      if (sources?.natsConnected) this.set(sources.natsConnected() ? 1 : 0);
    },
  });
  for (const outcome of ['committed', 'unchanged', 'dry-run', 'aborted', 'failed', 'skipped'])
    runs.inc({ outcome }, 0);
  return { registry, runs, items, duration, lastCommittedVersion, pendingEvents, natsConnected };
}

export type ImporterMetrics = ReturnType<typeof createImporterMetrics>;
