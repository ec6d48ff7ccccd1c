import { Gauge } from 'prom-client';
import type { AppMetrics } from './app-metrics';

export interface ConnectionChecks {
  /** Whether the MongoDB connection is up now, as the driver knows it (no round trip). */
  mongodb?: () => boolean;
  /** Whether the NATS connection is up now. */
  nats?: () => boolean;
}

/**
 * `<app>_mongodb_connected` and `<app>_nats_connected`: 1 while the connection is up, 0 while it
 * is not, read when scraped. The checks must be cheap and must not wait: a scrape during an
 * outage answers at once with a 0.
 */
export function connectionGauges(metrics: AppMetrics, checks: ConnectionChecks): void {
  const gauge = (name: string, help: string, check: () => boolean) =>
    new Gauge({
      name: metrics.name(name),
      help,
      registers: [metrics.registry],
      collect() {
        let up = false;
        try {
          up = check();
        } catch {
          // A check that fails says "not connected"; it never fails the scrape.
        }
        this.set(up ? 1 : 0);
      },
    });
  if (checks.mongodb) {
    gauge(
      'mongodb_connected',
      '1 while the MongoDB connection is up (as the driver knows it; it checks every second), else 0.',
      checks.mongodb,
    );
  }
  if (checks.nats) {
    gauge(
      'nats_connected',
      '1 while the NATS connection is up, else 0 (events wait in the outbox meanwhile).',
      checks.nats,
    );
  }
}
