import { context, trace } from '@opentelemetry/api';
import { startTracing } from '@nhp/shared-tracing';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '../src';

function capture() {
  const chunks: string[] = [];
  const logger = createLogger({
    name: 'test',
    level: 'info',
    destination: { write: (chunk: string) => void chunks.push(chunk) },
  });
  return { logger, lines: () => chunks.map((c) => JSON.parse(c) as Record<string, unknown>) };
}

describe('trace fields on log lines', () => {
  it('when tracing is off, then lines carry no trace fields and the logged object is left as it is', () => {
    const { logger, lines } = capture();
    const fields = { requestId: 'r-1' };
    logger.info(fields, 'no span');
    expect(lines()[0]).not.toHaveProperty('trace_id');
    expect(fields).toEqual({ requestId: 'r-1' });
  });

  it('when a span is active, then lines carry its trace_id and span_id; outside it, none', () => {
    const tracing = startTracing({
      serviceName: 'logger-test',
      spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
    });
    const { logger, lines } = capture();
    const span = trace.getTracer('test').startSpan('work');
    context.with(trace.setSpan(context.active(), span), () =>
      logger.info({ reqId: 'r-2' }, 'inside'),
    );
    span.end();
    logger.info('outside');
    const [inside, outside] = lines();
    expect(inside).toMatchObject({
      reqId: 'r-2',
      trace_id: span.spanContext().traceId,
      span_id: span.spanContext().spanId,
    });
    expect(outside).not.toHaveProperty('trace_id');
    return tracing.shutdown();
  });
});
