import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';

/** An app's metrics: its own registry (never prom-client's global one) and its name prefix. */
export interface AppMetrics {
  readonly registry: Registry;
  /** `<app>_`, e.g. `privacy_api_`: every metric of the app's own starts with it. */
  readonly prefix: string;
  /** The full name of one of the app's metrics: `name('http_requests_total')`. */
  name(suffix: string): string;
}

export interface CreateAppMetricsOptions {
  /**
   * prom-client's process and Node.js metrics (`process_cpu_seconds_total`,
   * `nodejs_heap_size_used_bytes`, ...), unprefixed: they have the standard names every dashboard
   * for a Node process knows, and Prometheus's `job` and `instance` labels tell the apps apart.
   * Default true; tests that build many apps in one process may turn them off.
   */
  defaultMetrics?: boolean;
}

const APP_NAME = /^[a-z][a-z0-9_]*[a-z0-9]$/;

/**
 * The registry of one app (`privacy_api`, `refsync_api`, `refsync_importer`), on which the shared
 * helpers of this library and the app's own metrics register. A registry per app rather than
 * prom-client's global one, so that tests and several apps in one process never share figures.
 */
export function createAppMetrics(app: string, options: CreateAppMetricsOptions = {}): AppMetrics {
  if (!APP_NAME.test(app)) {
    throw new RangeError(`metrics prefix must be snake_case (a-z, 0-9, _), got "${app}"`);
  }
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const prefix = `${app}_`;
  return { registry, prefix, name: (suffix) => `${prefix}${suffix}` };
}

/** One sample of a metric computed at scrape time. */
export interface ScrapedSample {
  labels: Record<string, string | number>;
  value: number;
  /** For a histogram's series: `<name>_bucket`, `<name>_sum` or `<name>_count`. */
  metricName?: string;
}

export interface ScrapedMetricOptions {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  /** The samples as they are now; called on every scrape. */
  samples(): ScrapedSample[];
}

/**
 * A metric whose samples are computed from plain numbers when it is scraped. prom-client's
 * Registry formats any metric from its `get()`; its own Counter and Histogram validate and hash
 * the labels on every `inc`/`observe`, a measurable share of a fast path's answer
 * (tools/bench/README.md), which is why request counting keeps plain numbers (see HttpMetrics).
 */
export function registerScraped(registry: Registry, options: ScrapedMetricOptions): void {
  const { name, help, type } = options;
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    async get() {
      return { name, help, type, aggregator: 'sum' as const, values: options.samples() };
    },
    reset() {
      // Counts are the app's, kept where they are made: nothing to reset here.
    },
  };
  registry.registerMetric(metric as unknown as Metric);
}
