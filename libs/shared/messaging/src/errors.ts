import { AppError } from '@nhp/shared-errors';

/** The code of an event NATS did not take (disconnected, no stream, no acknowledgement in time). */
export const MESSAGING_UNAVAILABLE = 'MESSAGING_UNAVAILABLE';

/**
 * A failed publish as the project's error type, naming NATS: an outage of the broker is
 * operational (the outbox keeps the event and retries), and its log line must not read like a
 * database failure. A publish timeout means no JetStream acknowledgement arrived in time (NATS
 * disconnected, failing over, or the stream's leader unavailable).
 */
export function publishFailed(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  const timedOut = /timeout/i.test(reason) || (err as { code?: unknown })?.code === 'TIMEOUT';
  return new AppError({
    code: MESSAGING_UNAVAILABLE,
    status: 503,
    category: 'unavailable',
    message: timedOut
      ? `NATS did not acknowledge the event in time (publish timeout: ${reason})`
      : `NATS did not take the event: ${reason}`,
    cause: err,
  });
}
