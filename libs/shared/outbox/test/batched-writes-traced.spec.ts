import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { tracer } from '@nhp/shared-tracing';
import { monitoredConnection, recordSpans, useTestInfra } from '@nhp/shared-testing';
import type { AnyBulkWriteOperation, CommandStartedEvent, Document } from 'mongodb';
import type { Connection } from 'mongoose';
import { batchedWrites } from '../src';

/**
 * Batched writes with tracing on: the shared command runs in no caller's context, and each caller
 * under a sampled span gets a span of the command that carried its statement, in its own trace;
 * callers under an unsampled span get none.
 */
const recorder = recordSpans('batched-writes');
const infra = useTestInfra();
const CLIENT = 3;

describe('batched writes, tracing on', () => {
  let conn: Connection;
  const seen: CommandStartedEvent[] = [];
  const record = (e: CommandStartedEvent) => {
    if (['insert', 'update', 'delete'].includes(e.commandName)) seen.push(e);
  };
  beforeAll(async () => {
    conn = await monitoredConnection(infra.get().mongoUri);
    conn.getClient().on('commandStarted', record);
  });
  beforeEach(() => {
    seen.length = 0;
  });
  afterAll(async () => {
    await conn.close();
    await recorder.shutdown();
  });

  const inSampledSpan = (name: string, write: () => Promise<void>) =>
    tracer().startActiveSpan(name, async (span) => {
      try {
        await write();
        return { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
      } finally {
        span.end();
      }
    });
  const commandSpansOf = (traceId: string) =>
    recorder.spans().filter((s) => s.traceId === traceId && s.kind === CLIENT);

  it('when sampled callers write in the same turn, then one command carries their statements and each gets a span of the command its statement went in', async () => {
    const writes = batchedWrites(conn);
    const write = (op: AnyBulkWriteOperation<Document>) => () => writes.write('traced_writes', op);
    const answers = await Promise.all([
      inSampledSpan('a', write({ insertOne: { document: { _id: 'w1' as never } } })),
      inSampledSpan('b', write({ insertOne: { document: { _id: 'w2' as never } } })),
      inSampledSpan(
        'c',
        write({ updateOne: { filter: { _id: 'w0' as never }, update: { $set: { n: 1 } } } }),
      ),
    ]);
    expect(seen.map((e) => e.commandName).sort()).toEqual(['insert', 'update']);
    expect(seen.find((e) => e.commandName === 'insert')?.command['documents']).toHaveLength(2);

    const expected = [
      ['insert', 2],
      ['insert', 2],
      ['update', 1],
    ] as const;
    answers.forEach((answer, i) => {
      const [operation, batchSize] = expected[i] as readonly [string, number];
      expect(commandSpansOf(answer.traceId)).toEqual([
        expect.objectContaining({
          name: `${operation} traced_writes`,
          parentSpanId: answer.spanId,
          attributes: {
            'db.system.name': 'mongodb',
            'db.namespace': conn.name,
            'db.operation.name': operation,
            'db.collection.name': 'traced_writes',
            'db.operation.batch.size': batchSize,
          },
        }),
      ]);
    });
  });

  it('when one statement of a sampled batch fails, then only its caller’s span is marked failed', async () => {
    const writes = batchedWrites(conn);
    await conn.collection('traced_writes_b').insertOne({ _id: 'taken' as never });
    const outcomes = await Promise.allSettled([
      inSampledSpan('ok', () =>
        writes.write('traced_writes_b', { insertOne: { document: { _id: 'free' as never } } }),
      ),
      inSampledSpan('dup', () =>
        writes.write('traced_writes_b', { insertOne: { document: { _id: 'taken' as never } } }),
      ),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    const failed = recorder
      .spans()
      .filter((s) => s.name === 'insert traced_writes_b' && s.attributes['error.type']);
    const succeeded = recorder
      .spans()
      .filter((s) => s.name === 'insert traced_writes_b' && !s.attributes['error.type']);
    expect(failed).toHaveLength(1);
    expect(succeeded).toHaveLength(1);
    expect(failed[0]?.attributes['error.type']).toBe('MongoServerError');
  });

  it('when callers under an unsampled span write together, then they share one command and get no spans', async () => {
    const writes = batchedWrites(conn);
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '5bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.NONE,
    });
    await context.with(unsampled, () =>
      Promise.all([
        writes.write('traced_writes', { insertOne: { document: { _id: 'u1' as never } } }),
        writes.write('traced_writes', { insertOne: { document: { _id: 'u2' as never } } }),
      ]),
    );
    expect(seen).toHaveLength(1);
    expect(
      recorder.spans().filter((s) => s.traceId === '5bf92f3577b34da6a3ce929d0e0e4736'),
    ).toEqual([]);
  });
});
