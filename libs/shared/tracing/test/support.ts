import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type IdGenerator,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';

/** A tracer sampling with `sampler` and drawing ids from `ids`, each span exported at its end. */
export function inMemoryTracer(sampler: Sampler, ids: IdGenerator) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    sampler,
    idGenerator: ids,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { exporter, tracer: provider.getTracer('t') };
}
