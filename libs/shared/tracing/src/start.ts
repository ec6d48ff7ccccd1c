import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface StartTracingOptions {
  /** service.name unless OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) names it. */
  serviceName: string;
  /**
   * Where spans go instead of the exporter the OTEL_* variables describe (tests: the SDK's
   * in-memory exporter). Given, tracing is on whatever the environment says.
   */
  spanProcessors?: SpanProcessor[];
  env?: NodeJS.ProcessEnv;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is still buffered and stops; a shutdown step, after the last request. */
  shutdown(): Promise<void>;
}

/** The instrumentation scope of the project's own spans. */
export const TRACER_NAME = '@nhp/shared-tracing';

let enabled = false;
/** Counts starts and stops, so that what is kept of one SDK (spans.ts's tracer) is not reused. */
let generation = 0;

/** Whether this process records spans (startTracing turned the SDK on). */
export function tracingEnabled(): boolean {
  return enabled;
}

/** Which start (or stop) of the SDK this is: changes with each. */
export function tracingGeneration(): number {
  return generation;
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

/**
 * Whether the standard variables ask for traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=console, unless OTEL_SDK_DISABLED
 * or OTEL_TRACES_EXPORTER=none. Without an endpoint nothing is exported, so nothing is recorded:
 * the SDK is not even loaded, and every span the code starts is the API's no-op.
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  const exporters = list(env['OTEL_TRACES_EXPORTER']);
  if (exporters[0] === 'none') return false;
  if (exporters.includes('console')) return true;
  return Boolean(
    env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim() || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim(),
  );
}

/**
 * Starts the OpenTelemetry Node SDK when the OTEL_* variables ask for traces (see
 * tracingRequested); the SDK reads every other setting from them (protocol, sampler, resource
 * attributes, batch sizes). Only traces: metrics are Prometheus's (/metrics) and logs pino's, so
 * the SDK's metric and log pipelines stay off whatever OTEL_METRICS_EXPORTER/OTEL_LOGS_EXPORTER
 * say (their default is an OTLP export).
 *
 * No auto-instrumentation: the spans are made by the code that knows what a span may carry (the
 * HTTP server, the MongoDB command monitor, the upstream download, the NATS publish and consume),
 * so they are the same under tsx, Jest and the esbuild bundle and need no load order (see the
 * README of this lib for why).
 */
export function startTracing(options: StartTracingOptions): Tracing {
  const env = options.env ?? process.env;
  if (!options.spanProcessors && !tracingRequested(env)) {
    return { enabled: false, shutdown: async () => undefined };
  }
  // Loaded only when traces are asked for: without an endpoint the SDK costs nothing, not even
  // its load time.
  const { NodeSDK } =
    require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const named =
    Boolean(env['OTEL_SERVICE_NAME']?.trim()) ||
    /(^|,)\s*service\.name\s*=/.test(env['OTEL_RESOURCE_ATTRIBUTES'] ?? '');
  // The SDK's own parts as they come: the sampler OTEL_TRACES_SAMPLER names (parent-based ratio in
  // production), its random ids, a batch span processor in front of the OTLP exporter, and the
  // AsyncLocalStorage context manager (named here so that it is the one whatever the SDK's default).
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: options.serviceName }),
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
    contextManager: new AsyncLocalStorageContextManager(),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  enabled = true;
  generation++;
  return {
    enabled: true,
    async shutdown() {
      await sdk.shutdown();
      enabled = false;
      generation++;
    },
  };
}
