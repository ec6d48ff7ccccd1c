import { Counter } from 'prom-client';
import type { AppMetrics } from './app-metrics';

/** What a publisher reports of each event it publishes (see @nhp/shared-outbox). */
export interface EventCounters {
  /** The stream acknowledged the event as new. */
  published(eventType: string): void;
  /** The publish failed (NATS down, no acknowledgement in time); the event stays pending. */
  failed(eventType: string): void;
}

/**
 * `<app>_events_published_total{type}` and `<app>_events_publish_failed_total{type}`, `type`
 * being the CloudEvents type (a handful per app). `types` are shown at 0 before the first event,
 * so a rate can be computed from the start.
 */
export function eventCounters(metrics: AppMetrics, types: readonly string[] = []): EventCounters {
  const published = new Counter({
    name: metrics.name('events_published_total'),
    help: 'Events JetStream acknowledged as new (a repeat it drops as a duplicate is not counted), by CloudEvents type.',
    labelNames: ['type'] as const,
    registers: [metrics.registry],
  });
  const failed = new Counter({
    name: metrics.name('events_publish_failed_total'),
    help: 'Publish attempts that failed (NATS down, no acknowledgement in time), by CloudEvents type; the event stays in the outbox and is tried again.',
    labelNames: ['type'] as const,
    registers: [metrics.registry],
  });
  for (const type of types) {
    published.inc({ type }, 0);
    failed.inc({ type }, 0);
  }
  return {
    published: (type) => published.inc({ type }),
    failed: (type) => failed.inc({ type }),
  };
}
