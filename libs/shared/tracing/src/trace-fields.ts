import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { tracingEnabled } from './start';

export interface TraceFields {
  trace_id?: string;
  span_id?: string;
}

const NONE: TraceFields = Object.freeze({});

/**
 * `trace_id` and `span_id` of the active span, for a log line (pino's mixin); empty when tracing
 * is off or no span is active, which costs one flag check.
 */
export function activeTraceFields(): TraceFields {
  if (!tracingEnabled()) return NONE;
  const spanContext = trace.getSpanContext(context.active());
  if (!spanContext || !isSpanContextValid(spanContext)) return NONE;
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
