import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { DeferredSpans, type SpanRecord } from '../src/deferred-spans';
import {
  DecidedSampler,
  ReusableIdGenerator,
  RootSampling,
  rootBoundFromEnv,
  samplerFromEnv,
} from '../src/root-sampling';
import { inMemoryTracer } from './support';

const ENV = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' };

function setUp() {
  const inner = samplerFromEnv(ENV) as Sampler;
  const sampler = new DecidedSampler(inner);
  const ids = new ReusableIdGenerator();
  const { exporter, tracer } = inMemoryTracer(sampler, ids);
  const roots = new RootSampling(sampler, ids, rootBoundFromEnv(ENV));
  const deferred = new DeferredSpans(tracer, roots);
  return { inner, sampler, ids, exporter, tracer, roots, deferred };
}

/** A sampled root's record and the context its children run in (as the request wrapper makes). */
function rootRecord(roots: RootSampling, startTime: number, endTime: number) {
  const decision = roots.decide('GET', SpanKind.SERVER, () => ({}), ROOT_CONTEXT);
  const spanId = roots.spanId();
  const running = trace.setSpan(ROOT_CONTEXT, roots.sampledSpan(decision, spanId));
  const record: SpanRecord = {
    name: 'GET /x',
    kind: SpanKind.SERVER,
    attributes: { 'http.route': '/x' },
    parent: ROOT_CONTEXT,
    startTime,
    endTime,
    root: { decision, spanId },
  };
  return { decision, spanId, running, record };
}

describe('DeferredSpans', () => {
  afterEach(() => jest.useRealTimers());

  it('when a sampled root is recorded, then its span is made later with the ids, decision, times and attributes it ran with', () => {
    const { inner, exporter, roots, deferred } = setUp();
    const asked = jest.spyOn(inner, 'shouldSample');
    // Times the request took (performance.now() values, in the past as recorded ones are).
    const start = performance.now() - 50;
    const { decision, spanId, running, record } = rootRecord(roots, start, start + 12.5);
    // A child made while the root ran names it through the running context.
    const childRecord: SpanRecord = {
      name: 'find settings',
      kind: SpanKind.CLIENT,
      attributes: { 'db.operation.name': 'find' },
      parent: running,
      startTime: start + 2,
      endTime: start + 4,
      error: 'NetworkTimeout',
    };
    deferred.add(childRecord);
    deferred.add(record);
    expect(exporter.getFinishedSpans()).toEqual([]);

    deferred.flush();
    const [child, root] = exporter.getFinishedSpans();
    expect(root?.spanContext()).toMatchObject({ traceId: decision.traceId, spanId });
    expect(root?.parentSpanContext).toBeUndefined();
    expect(root?.name).toBe('GET /x');
    expect(root?.kind).toBe(SpanKind.SERVER);
    expect(root?.attributes).toEqual({ 'http.route': '/x' });
    expect(root?.status.code).toBe(SpanStatusCode.UNSET);
    // The root's decision was the one recorded, not asked of the sampler again.
    expect(asked).not.toHaveBeenCalledWith(
      expect.anything(),
      decision.traceId,
      'GET /x',
      expect.anything(),
      expect.anything(),
      expect.anything(),
    );
    const duration =
      hrTimeToMilliseconds(root?.endTime ?? [0, 0]) -
      hrTimeToMilliseconds(root?.startTime ?? [0, 0]);
    expect(duration).toBeCloseTo(12.5, 1);

    expect(child?.spanContext().traceId).toBe(decision.traceId);
    expect(child?.parentSpanContext?.spanId).toBe(spanId);
    expect(child?.attributes).toMatchObject({ 'error.type': 'NetworkTimeout' });
    expect(child?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('when records wait, then they are made by the timer, or at once when a batch is full', () => {
    jest.useFakeTimers();
    const { exporter, roots, deferred } = setUp();
    const start = performance.now();
    deferred.add(rootRecord(roots, start, start + 1).record);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    jest.advanceTimersByTime(100);
    expect(exporter.getFinishedSpans()).toHaveLength(1);

    for (let i = 0; i < 63; i++) deferred.add(rootRecord(roots, start, start + 1).record);
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    deferred.add(rootRecord(roots, start, start + 1).record);
    expect(exporter.getFinishedSpans()).toHaveLength(65);
    // Each root its own trace and span id.
    const traceIds = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));
    expect(traceIds.size).toBe(65);
  });

  it('when closed, then what waits is made and every later record at once', () => {
    const { exporter, roots, deferred } = setUp();
    const start = performance.now();
    deferred.add(rootRecord(roots, start, start + 1).record);
    deferred.close();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    deferred.add(rootRecord(roots, start, start + 1).record);
    expect(exporter.getFinishedSpans()).toHaveLength(2);
  });

  it('when a root has been made, then the next span gets fresh ids and asks the sampler', () => {
    const { inner, ids, tracer, roots, deferred } = setUp();
    const asked = jest.spyOn(inner, 'shouldSample');
    const start = performance.now();
    const { decision, spanId, record } = rootRecord(roots, start, start + 1);
    deferred.add(record);
    deferred.flush();
    const next = tracer.startSpan('other', {}, ROOT_CONTEXT);
    expect(next.spanContext().traceId).not.toBe(decision.traceId);
    expect(next.spanContext().spanId).not.toBe(spanId);
    expect(asked).toHaveBeenCalledTimes(1);
    expect(ids.generateSpanId()).not.toBe(spanId);
    next.end();
  });
});
