import { registerScraped, type AppMetrics } from './app-metrics';

/** A counter over a fixed set of label values; an increment costs one addition. */
export interface BoundedCounter<V extends string> {
  inc(value: V): void;
}

/**
 * `<app>_<suffix>{<label>}` over a fixed set of values, all shown from 0 (so a ratio or a rate
 * can be computed from the start). A value outside the set is never a label: it is dropped, so
 * no caller can grow the series. Counted in plain numbers, like the request counts, for the
 * paths that count on every request.
 */
export function boundedCounter<V extends string>(
  metrics: AppMetrics,
  options: { suffix: string; help: string; label: string; values: readonly V[] },
): BoundedCounter<V> {
  const counts = new Map<string, number>(options.values.map((value) => [value, 0]));
  registerScraped(metrics.registry, {
    name: metrics.name(options.suffix),
    help: options.help,
    type: 'counter',
    samples: () =>
      [...counts].map(([value, count]) => ({ labels: { [options.label]: value }, value: count })),
  });
  return {
    inc(value) {
      const count = counts.get(value);
      if (count !== undefined) counts.set(value, count + 1);
    },
  };
}

/** A counter without labels, counted in a plain number. */
export function plainCounter(
  metrics: AppMetrics,
  options: { suffix: string; help: string },
): { inc(): void } {
  let count = 0;
  registerScraped(metrics.registry, {
    name: metrics.name(options.suffix),
    help: options.help,
    type: 'counter',
    samples: () => [{ labels: {}, value: count }],
  });
  return {
    inc() {
      count += 1;
    },
  };
}
