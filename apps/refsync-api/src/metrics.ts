import {
  connectionGauges,
  createAppMetrics,
  HttpMetrics,
  readinessGauge,
  registerScraped,
  type ConnectionChecks,
} from '@nhp/shared-metrics';
import { Gauge } from 'prom-client';

export interface MetricsSources extends ConnectionChecks {
  /** The version being served (undefined before the first read). */
  servedVersion(): number | undefined;
  /** The committed version in storage, read at scrape time. */
  storedVersion(): Promise<number>;
  cache(): { bytes: number; entries: number; maxBytes: number };
  /** Whether the service is ready now (refsync_api_ready); without it the gauge is not shown. */
  ready?(): Promise<boolean>;
}

/**
 * refsync-api's Prometheus metrics (README, "Metrics"): the shared request and connection metrics
 * under `refsync_api_` (@nhp/shared-metrics: both the fast path and Express count through
 * `http`), and its cache and data-version figures. On a registry of its own, so tests and several
 * apps in one process never share figures.
 *
 * The request path counts in plain integers that become samples when scraped: a labelled
 * prom-client `inc` hashes its labels on every call, a cost of the same order as the fast path's
 * own work for a 304 (tools/bench/README.md).
 */
export class RefsyncApiMetrics {
  readonly registry;
  readonly http: HttpMetrics;
  /**
   * hits: bodies served from the response cache (a 304 is counted by its status only); misses:
   * requests whose body was not in the cache and was computed (or waited for).
   */
  readonly cache = { hits: 0, misses: 0 };

  constructor(sources: MetricsSources, options: { defaultMetrics?: boolean } = {}) {
    const app = createAppMetrics('refsync_api', options);
    const registry = app.registry;
    this.registry = registry;
    this.http = new HttpMetrics(app);
    connectionGauges(app, sources);
    if (sources.ready) readinessGauge(app, sources.ready);
    const { cache } = this;
    registerScraped(registry, {
      name: app.name('cache_hits_total'),
      help: 'Dataset responses whose body came from the response cache.',
      type: 'counter',
      samples: () => [{ labels: {}, value: cache.hits }],
    });
    registerScraped(registry, {
      name: app.name('cache_misses_total'),
      help: 'Dataset responses whose body was not in the cache (computed from storage).',
      type: 'counter',
      samples: () => [{ labels: {}, value: cache.misses }],
    });
    new Gauge({
      name: app.name('cache_bytes'),
      help: 'Bytes held by the response cache (bodies plus a fixed overhead per entry).',
      registers: [registry],
      collect() {
        this.set(sources.cache().bytes);
      },
    });
    new Gauge({
      name: app.name('cache_max_bytes'),
      help: 'The byte bound of the response cache (REFSYNC_CACHE_MAX_BYTES).',
      registers: [registry],
      collect() {
        this.set(sources.cache().maxBytes);
      },
    });
    new Gauge({
      name: app.name('cache_entries'),
      help: 'Representations held by the response cache.',
      registers: [registry],
      collect() {
        this.set(sources.cache().entries);
      },
    });
    new Gauge({
      name: app.name('data_version'),
      help: 'The data version being served (-1 before the first read).',
      registers: [registry],
      collect() {
        this.set(sources.servedVersion() ?? -1);
      },
    });
    new Gauge({
      name: app.name('data_version_lag'),
      help: 'Committed versions in storage not served yet (stored minus served), read at scrape time; 0 when current.',
      registers: [registry],
      async collect() {
        const served = sources.servedVersion();
        try {
          const stored = await sources.storedVersion();
          this.set(served === undefined ? stored : Math.max(0, stored - served));
        } catch {
          // Storage unreachable: keep the last value rather than fail the whole scrape.
        }
      },
    });
  }
}
