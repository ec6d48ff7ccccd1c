import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';

/** What changed: the kind of cached thing and its key (never personal data). */
export interface Invalidation {
  kind: string;
  key: string;
}

/**
 * Tells every instance that a cached entry changed, over core NATS (fire and forget: no stream,
 * nothing kept). When NATS is down the message is lost and instances fall back on their cache's
 * time-to-live, so this never throws.
 */
export function announceInvalidation(
  nc: NatsConnection | undefined,
  subject: string,
  invalidation: Invalidation,
  logger?: Logger,
): void {
  if (!nc || nc.isClosed()) return;
  try {
    nc.publish(subject, JSON.stringify(invalidation));
  } catch (err) {
    logger?.warn({ err, subject }, 'cache invalidation not announced; the cache TTL applies');
  }
}

/**
 * Calls `handler` for each announcement on `subject` (including this instance's own). The client
 * resubscribes by itself after a reconnect. Malformed messages are ignored.
 */
export function listenForInvalidations(
  nc: NatsConnection,
  subject: string,
  handler: (invalidation: Invalidation) => void,
  logger?: Logger,
): Subscription {
  return nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) {
        logger?.warn({ err, subject }, 'cache invalidation subscription failed');
        return;
      }
      try {
        const parsed = msg.json<Partial<Invalidation>>();
        if (typeof parsed.kind === 'string' && typeof parsed.key === 'string') {
          handler({ kind: parsed.kind, key: parsed.key });
        }
      } catch {
        logger?.debug({ subject }, 'malformed cache invalidation ignored');
      }
    },
  });
}
