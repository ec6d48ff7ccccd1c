import { context, trace, type Context, type ContextManager } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { DeferredSpans, SpanRecord } from './deferred-spans';
import type { RootSampling } from './root-sampling';

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
let roots: RootSampling | undefined;
let deferred: DeferredSpans | undefined;
/** The context manager the SDK was started with (activeContext). */
let manager: ContextManager | undefined;
/** Counts starts and stops, so that what is kept of one SDK (spans.ts's tracer) is not reused. */
let generation = 0;

/** Whether this process records spans (startTracing turned the SDK on). */
export function tracingEnabled(): boolean {
  return enabled;
}

/**
 * Where the hot paths record a span that has ended (a sampled request's own span, a sampled read's
 * share of a coalesced command): the tracer makes it with others (DeferredSpans). Nothing while
 * tracing is off.
 */
export function recordSpan(record: SpanRecord): void {
  deferred?.add(record);
}

/** Whether recordSpan takes roots: tracing is on with one of the specification's samplers. */
export function recordsRoots(): boolean {
  return roots !== undefined && deferred !== undefined;
}

/** Makes every span recorded so far now (tests read them at once; shutdown exports them). */
export function flushDeferredSpans(): void {
  deferred?.flush();
}

/** Which start (or stop) of the SDK this is: changes with each. */
export function tracingGeneration(): number {
  return generation;
}

/**
 * The active context, from the context manager startTracing installed when tracing is on: what
 * `context.active()` answers, without the API's way there (re-export getters, the global registry
 * and its version check) on paths that ask for every read and every command.
 */
export function activeContext(): Context {
  return manager ? manager.active() : context.active();
}

/**
 * How a root request's sampling is decided before the tracer (see RootSampling), while tracing is
 * on with one of the specification's samplers; undefined otherwise (the tracer decides alone).
 */
export function rootSampling(): RootSampling | undefined {
  return roots;
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
 * Whether this runtime's AsyncLocalStorage keeps its store in V8's async context frames rather
 * than in async hooks: Node 24 and later unless started with --no-async-context-frame, Node 22.7+
 * when started with --experimental-async-context-frame. There the SDK's own context manager costs
 * next to nothing; elsewhere (Node 20) PromiseContextManager carries the context (see there).
 */
export function asyncContextFrames(
  version: string = process.versions.node,
  flags: readonly string[] = [
    ...process.execArgv,
    ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/),
  ],
): boolean {
  const major = Number(version.split('.')[0]);
  if (major >= 24) return !flags.includes('--no-async-context-frame');
  return major >= 22 && flags.includes('--experimental-async-context-frame');
}

/** The context manager for this runtime (see asyncContextFrames), loaded only with the SDK. */
function loadContextManager(): ContextManager {
  if (asyncContextFrames()) {
    const { AsyncLocalStorageContextManager } =
      require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
    return new AsyncLocalStorageContextManager();
  }
  const { PromiseContextManager } =
    require('./promise-context') as typeof import('./promise-context');
  return new PromiseContextManager();
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
  const { DecidedSampler, ReusableIdGenerator, RootSampling, rootBoundFromEnv, samplerFromEnv } =
    require('./root-sampling') as typeof import('./root-sampling');
  // The sampler and ids the SDK would make from the environment, made here so that the request
  // wrapper can ask the same instances first (RootSampling).
  const samplerOfEnv = samplerFromEnv(env);
  const sampler = samplerOfEnv ? new DecidedSampler(samplerOfEnv) : undefined;
  const idGenerator = new ReusableIdGenerator();
  const named =
    Boolean(env['OTEL_SERVICE_NAME']?.trim()) ||
    /(^|,)\s*service\.name\s*=/.test(env['OTEL_RESOURCE_ATTRIBUTES'] ?? '');
  const contextManager = loadContextManager();
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: options.serviceName }),
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
    contextManager,
    ...(sampler ? { sampler } : {}),
    idGenerator,
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  enabled = true;
  manager = contextManager;
  generation++;
  roots = sampler ? new RootSampling(sampler, idGenerator, rootBoundFromEnv(env)) : undefined;
  const { DeferredSpans } = require('./deferred-spans') as typeof import('./deferred-spans');
  deferred = new DeferredSpans(trace.getTracer(TRACER_NAME), roots);
  return {
    enabled: true,
    async shutdown() {
      // The recorded spans first, so that the SDK exports them.
      deferred?.close();
      await sdk.shutdown();
      enabled = false;
      roots = undefined;
      deferred = undefined;
      manager = undefined;
      generation++;
    },
  };
}
