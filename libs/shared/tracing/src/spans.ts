import {
  context,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { TRACER_NAME } from './http-server';
import { tracingEnabled, tracingGeneration } from './start';

// Read once: the API's exports are re-export getters, which a bundle calls at each use, and these
// are asked for every read and command.
const traceApi = trace;
const SAMPLED = TraceFlags.SAMPLED;

/**
 * Whether the active span is sampled (a sampled request, run or relay; ended or not: a request's
 * journal is written after its response): work under it gets spans of its own, which the sampler
 * records. Under an unsampled span, or none, a child would record nothing.
 */
export function activeSpanSampled(): boolean {
  const span = traceApi.getSpan(context.active());
  return span !== undefined && (span.spanContext().traceFlags & SAMPLED) !== 0;
}

/**
 * The active context when tracing is on and its span is sampled, else undefined (one flag check
 * when tracing is off): what a caller of shared work (a coalesced read, a batched write) hands over,
 * so that the shared command can give it a span in its own trace.
 */
export function sampledContext(): Context | undefined {
  return tracingEnabled() && activeSpanSampled() ? context.active() : undefined;
}

/**
 * Runs `fn` in the root context when tracing is on: for work shared by several callers (perTurn's
 * hand-over), which belongs to no caller's trace.
 */
export function inRootContext(fn: () => void): void {
  if (tracingEnabled()) context.with(ROOT_CONTEXT, fn);
  else fn();
}

let kept: { tracer: Tracer; generation: number } | undefined;

/**
 * The project's tracer (the API's no-op until startTracing registered the SDK), looked up once per
 * start of the SDK rather than for each span (the provider builds a key and searches its map).
 */
export function tracer(): Tracer {
  const generation = tracingGeneration();
  if (kept?.generation !== generation) {
    kept = { tracer: traceApi.getTracer(TRACER_NAME), generation };
  }
  return kept.tracer;
}

/**
 * The error's kind for `error.type`: its code or its class name, never its message (a driver's
 * message may quote the document it refused, identity number included).
 */
export function errorType(err: unknown): string {
  const e = err as { code?: unknown; codeName?: unknown; name?: unknown } | undefined;
  if (typeof e?.codeName === 'string') return e.codeName;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.name === 'string' && e.name) return e.name;
  return 'Error';
}

/** Marks a span failed with the error's kind (see errorType). */
export function failSpan(span: Span, err: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType(err));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Runs `fn` in a new active span that ends when `fn` settles, failed when it throws. `parent`
 * defaults to the active context.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  return tracer().startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}
