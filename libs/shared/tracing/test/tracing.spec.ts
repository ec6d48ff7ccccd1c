import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  currentTraceCarrier,
  deferredContext,
  spanContextOf,
  startTracing,
  tracingEnabled,
  tracingRequested,
} from '../src';

describe('tracingRequested', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
  ])('when the environment is %j, then traces are requested: %s', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });
});

describe('without an endpoint', () => {
  it('when startTracing finds no endpoint, then tracing stays off and nothing is carried', async () => {
    const tracing = startTracing({ serviceName: 'test', env: {} });
    expect(tracing.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect(currentTraceCarrier()).toEqual({});
    await tracing.shutdown();
  });
});

describe('deferred work (tracing on)', () => {
  const exporter = new InMemorySpanExporter();
  let shutdown: () => Promise<void>;
  beforeAll(() => {
    shutdown = startTracing({
      serviceName: 'test',
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    }).shutdown;
  });
  afterAll(() => shutdown());
  const tracer = () => trace.getTracer('test');

  it('when a change records its context, then the carrier names its span in W3C form', () => {
    const span = tracer().startSpan('change');
    const carrier = context.with(trace.setSpan(context.active(), span), () =>
      currentTraceCarrier(),
    );
    span.end();
    expect(carrier.traceparent).toBe(
      `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`,
    );
    expect(spanContextOf(carrier)?.spanId).toBe(span.spanContext().spanId);
  });

  it('when the deferred work runs inside the change trace, then it stays there without a link', () => {
    const span = tracer().startSpan('change');
    const active = trace.setSpan(context.active(), span);
    const carrier = context.with(active, () => currentTraceCarrier());
    const deferred = context.with(active, () => deferredContext(carrier));
    span.end();
    expect(trace.getSpanContext(deferred.context)?.spanId).toBe(span.spanContext().spanId);
    expect(deferred.links).toEqual([]);
  });

  it('when the deferred work runs elsewhere (a sweep, after a restart), then it starts a new trace linked to the change', () => {
    const carrier = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const other = tracer().startSpan('sweep');
    const deferred = context.with(trace.setSpan(context.active(), other), () =>
      deferredContext(carrier),
    );
    other.end();
    expect(trace.getSpanContext(deferred.context)).toBeUndefined();
    expect(deferred.links.map((l) => l.context.spanId)).toEqual(['b7ad6b7169203331']);
  });

  it('when the stored context is malformed, then the work runs as it would have without one', () => {
    expect(deferredContext({ traceparent: 'garbage' }).links).toEqual([]);
  });
});
