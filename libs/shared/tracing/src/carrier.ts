import {
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  trace,
  type Context,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { tracingEnabled } from './start';

/**
 * A span context in W3C Trace Context form: what an outbox entry stores beside its event (the
 * change's context, for the relay that publishes it later, maybe after a restart) and what a
 * CloudEvent carries as its distributed-tracing extension attributes. Always W3C, whatever
 * OTEL_PROPAGATORS says: the CloudEvents extension is defined on these two headers.
 */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

const w3c = new W3CTraceContextPropagator();
const NONE: TraceCarrier = Object.freeze({});

/** The active span's context as a carrier; empty when tracing is off or no span is active. */
export function currentTraceCarrier(ctx: Context = context.active()): TraceCarrier {
  if (!tracingEnabled()) return NONE;
  const carrier: Record<string, string> = {};
  w3c.inject(ctx, carrier, { set: (c, k, v) => (c[k] = v) });
  if (!carrier['traceparent']) return NONE;
  return carrier['tracestate']
    ? { traceparent: carrier['traceparent'], tracestate: carrier['tracestate'] }
    : { traceparent: carrier['traceparent'] };
}

/** The span context a carrier names, or undefined (absent, malformed, or tracing off). */
export function spanContextOf(carrier: TraceCarrier | undefined): SpanContext | undefined {
  if (!carrier?.traceparent || !tracingEnabled()) return undefined;
  const extracted = w3c.extract(ROOT_CONTEXT, carrier, {
    get: (c, k) => (c as Record<string, string | undefined>)[k],
    keys: (c) => Object.keys(c),
  });
  const spanContext = trace.getSpanContext(extracted);
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

/**
 * The context a deferred operation (an outbox relay's publish) runs in, given the context of the
 * change that asked for it:
 * - while that change's trace is the active one (the relay right after the write, in the same
 *   request), the active context: the publish is a child span in the change's trace;
 * - otherwise (a sweep, a retry after an outage, a relay after a restart: the change's span is
 *   gone), a new trace, with a span link to the change.
 */
export function deferredContext(origin: TraceCarrier | undefined): {
  context: Context;
  links: Link[];
} {
  const active = context.active();
  const originContext = spanContextOf(origin);
  if (!originContext) return { context: active, links: [] };
  const current = trace.getSpanContext(active);
  if (current && current.traceId === originContext.traceId) return { context: active, links: [] };
  return { context: trace.deleteSpan(active), links: [{ context: originContext }] };
}
