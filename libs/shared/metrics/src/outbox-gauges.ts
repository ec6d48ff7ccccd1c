import { Gauge } from 'prom-client';
import type { AppMetrics } from './app-metrics';

/** What an outbox holds now. */
export interface OutboxBacklog {
  /** Entries (events) not yet acknowledged by the stream. */
  pending: number;
  /** When the oldest of them was recorded; undefined when none is pending. */
  oldestCreatedAt: Date | undefined;
}

export interface OutboxGaugesOptions {
  /**
   * Reads the backlog; called once per scrape. It must be cheap and bounded (an indexed query, a
   * count from metadata) and should fail fast while the database is known to be down.
   */
  read(): Promise<OutboxBacklog>;
  /** A read that takes longer is given up for this scrape (default 1000 ms). */
  timeoutMs?: number;
  now?: () => number;
}

/**
 * `<app>_outbox_pending_events` and `<app>_outbox_oldest_pending_age_seconds` (0 when nothing is
 * pending), read when scraped. When the read fails or times out (MongoDB down), the gauges keep
 * the last values read, so a scrape never fails and shows what is known.
 */
export function outboxGauges(metrics: AppMetrics, options: OutboxGaugesOptions): void {
  const timeoutMs = options.timeoutMs ?? 1000;
  const now = options.now ?? Date.now;
  let reading: Promise<OutboxBacklog | undefined> | undefined;

  /** One read shared by both gauges: the registry collects them at the same time. */
  function read(): Promise<OutboxBacklog | undefined> {
    reading ??= new Promise<OutboxBacklog | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      timer.unref();
      options.read().then(
        (backlog) => {
          clearTimeout(timer);
          resolve(backlog);
        },
        () => {
          clearTimeout(timer);
          resolve(undefined);
        },
      );
    }).finally(() => {
      reading = undefined;
    });
    return reading;
  }

  new Gauge({
    name: metrics.name('outbox_pending_events'),
    help: 'Events recorded in the outbox and not yet acknowledged by JetStream (the last value read if the database cannot be read now).',
    registers: [metrics.registry],
    async collect() {
      const backlog = await read();
      if (backlog) this.set(backlog.pending);
    },
  });
  new Gauge({
    name: metrics.name('outbox_oldest_pending_age_seconds'),
    help: 'Age of the oldest event still pending in the outbox, 0 when none is (the last value read if the database cannot be read now).',
    registers: [metrics.registry],
    async collect() {
      const backlog = await read();
      if (!backlog) return;
      const oldest = backlog.oldestCreatedAt;
      this.set(backlog.pending > 0 && oldest ? Math.max(0, (now() - oldest.getTime()) / 1000) : 0);
    },
  });
}
