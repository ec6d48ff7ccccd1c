export {
  startTracing,
  tracingEnabled,
  tracingRequested,
  type StartTracingOptions,
  type Tracing,
} from './start';
export { currentTraceCarrier, deferredContext, spanContextOf, type TraceCarrier } from './carrier';
export { inRequestContext, setHttpRoute, traceHttpRequests, TRACER_NAME } from './http-server';
export {
  activeSpanSampled,
  errorType,
  failSpan,
  inRootContext,
  inSpan,
  sampledContext,
  tracer,
} from './spans';
export { activeTraceFields, type TraceFields } from './trace-fields';
