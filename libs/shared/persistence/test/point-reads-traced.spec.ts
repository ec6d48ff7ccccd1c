import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { tracer } from '@nhp/shared-tracing';
import { monitoredConnection, recordSpans, useTestInfra } from '@nhp/shared-testing';
import type { CommandStartedEvent } from 'mongodb';
import type { Connection } from 'mongoose';
import { pointReads } from '../src';

/**
 * Coalesced point reads with tracing on: the shared command runs in no request's context, and
 * each read under a sampled span gets a span of that command in its own trace; reads under an
 * unsampled span get none.
 */
const recorder = recordSpans('point-reads');
const infra = useTestInfra();

describe('coalesced point reads, tracing on', () => {
  let conn: Connection;
  const seen: CommandStartedEvent[] = [];
  const record = (e: CommandStartedEvent) => {
    if (e.commandName === 'find') seen.push(e);
  };
  beforeAll(async () => {
    conn = await monitoredConnection(infra.get().mongoUri);
    await conn.collection('traced_reads').insertMany([
      { _id: 'x1' as never, fnr: 'a', definition: 'd1' },
      { _id: 'x2' as never, fnr: 'a', definition: 'd2' },
    ]);
    conn.getClient().on('commandStarted', record);
  });
  beforeEach(() => {
    seen.length = 0;
  });
  afterAll(async () => {
    await conn.close();
    await recorder.shutdown();
  });

  const reads = () => pointReads(conn, 'traced_reads', { coalesceOn: ['fnr', 'definition'] });
  const readBoth = () => {
    const r = reads();
    return Promise.all([
      r.findOne({ fnr: 'a', definition: 'd1' }),
      r.findOne({ fnr: 'a', definition: 'd2' }),
    ]);
  };
  const CLIENT = 3;

  it('when reads are asked for under sampled spans, then they share one find and each gets a span of it in its own trace', async () => {
    const r = reads();
    const inSampledSpan = (definition: string) =>
      tracer().startActiveSpan(`request ${definition}`, async (span) => {
        try {
          expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
          const doc = await r.findOne({ fnr: 'a', definition });
          return { doc, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
        } finally {
          span.end();
        }
      });
    const answers = await Promise.all([inSampledSpan('d1'), inSampledSpan('d2')]);
    expect(answers.map((a) => a.doc?._id)).toEqual(['x1', 'x2']);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.command['filter']).toEqual({
      $or: [
        { fnr: 'a', definition: 'd1' },
        { fnr: 'a', definition: 'd2' },
      ],
    });
    for (const answer of answers) {
      const commands = recorder
        .spans()
        .filter((s) => s.traceId === answer.traceId && s.kind === CLIENT);
      expect(commands).toEqual([
        expect.objectContaining({
          name: 'find traced_reads',
          parentSpanId: answer.spanId,
          attributes: {
            'db.system.name': 'mongodb',
            'db.namespace': conn.name,
            'db.operation.name': 'find',
            'db.collection.name': 'traced_reads',
            'db.operation.batch.size': 2,
          },
        }),
      ]);
    }
  });

  it('when reads are asked for under an unsampled span, then they share one find', async () => {
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.NONE,
    });
    const found = await context.with(unsampled, readBoth);
    expect(found.map((d) => d?._id)).toEqual(['x1', 'x2']);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.command['filter']).toEqual({
      $or: [
        { fnr: 'a', definition: 'd1' },
        { fnr: 'a', definition: 'd2' },
      ],
    });
    const traced = recorder.spans().filter((s) => s.traceId === '4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traced).toEqual([]);
  });
});
