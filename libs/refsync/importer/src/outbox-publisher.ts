import type { RefsyncWriteRepository } from '@nhp/refsync-data-access';
import type { Logger } from '@nhp/shared-logger';
import {
  natsIsConnected,
  publishCloudEvent,
  type CloudEvent,
  type NatsConnection,
} from '@nhp/shared-messaging';

export interface PublishSummary {
  published: number;
  /** Acknowledged as already in the stream (a re-publish inside the duplicate window). */
  duplicates: number;
  /** Still pending after this attempt. */
  pending: number;
  error?: string;
}

export interface OutboxPublisherOptions {
  outbox: Pick<RefsyncWriteRepository, 'pendingEvents' | 'markEventPublished'>;
  /** The NATS connection, once there is one (the importer starts without NATS). */
  nats: () => NatsConnection | undefined;
  logger: Logger;
  ackTimeoutMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onPublished?: (summary: PublishSummary) => void;
  /** Runs before publishing on a connection (the importer provisions its stream here). */
  prepare?: (nc: NatsConnection) => Promise<void>;
  /** Called when publishing failed, before the retry. */
  onError?: (err: unknown) => void;
}

/**
 * Sends the outbox's pending events to JetStream, oldest first, each with its event id as
 * Nats-Msg-Id, and marks an event sent only after JetStream acknowledged it. A crash between the
 * ack and the mark re-sends the event later, which the stream drops as a duplicate: at least once
 * on the wire, exactly once in the stream.
 */
export function createOutboxPublisher(options: OutboxPublisherOptions) {
  const { outbox, logger } = options;
  const ackTimeoutMs = options.ackTimeoutMs ?? 5000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  let inFlight: Promise<PublishSummary> | undefined;

  async function publishOnce(): Promise<PublishSummary> {
    const events = await outbox.pendingEvents();
    const summary: PublishSummary = { published: 0, duplicates: 0, pending: events.length };
    if (events.length === 0) return summary;
    const nc = options.nats();
    if (!nc || !natsIsConnected(nc)) return { ...summary, error: 'NATS is not connected' };
    try {
      await options.prepare?.(nc);
    } catch (err) {
      options.onError?.(err);
      return { ...summary, error: `JetStream not ready: ${(err as Error).message}` };
    }
    for (const event of events) {
      try {
        const ack = await publishCloudEvent(nc, event.subject, event.payload as CloudEvent, {
          msgId: event.id,
          timeoutMs: ackTimeoutMs,
        });
        await outbox.markEventPublished(event.id);
        summary.pending -= 1;
        if (ack.duplicate) summary.duplicates += 1;
        else summary.published += 1;
        logger.info(
          {
            eventId: event.id,
            subject: event.subject,
            stream: ack.stream,
            seq: ack.seq,
            duplicate: ack.duplicate,
          },
          'event published',
        );
      } catch (err) {
        options.onError?.(err);
        // Keep the order: later events wait until this one is acknowledged.
        return { ...summary, error: (err as Error).message };
      }
    }
    return summary;
  }

  /** One pass over the pending events; concurrent callers share the pass in progress. */
  function publishPending(): Promise<PublishSummary> {
    inFlight ??= publishOnce()
      .catch((err: unknown): PublishSummary => ({
        published: 0,
        duplicates: 0,
        pending: -1,
        error: (err as Error).message,
      }))
      .then((summary) => {
        if (summary.published + summary.duplicates > 0) options.onPublished?.(summary);
        return summary;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  }

  const backoff = (attempt: number) =>
    Math.min(maxDelayMs, baseDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);

  /** Retries with backoff until nothing is pending or `deadlineMs` has passed. */
  async function publishUntilAcked(deadlineMs: number): Promise<PublishSummary> {
    const end = Date.now() + deadlineMs;
    for (let attempt = 0; ; attempt++) {
      const summary = await publishPending();
      if (!summary.error) return summary;
      const delay = backoff(attempt);
      if (Date.now() + delay > end) return summary;
      logger.warn(
        { pending: summary.pending, reason: summary.error, retryInMs: Math.round(delay) },
        'events not yet published, retrying',
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  let running = false;
  let wake: (() => void) | undefined;
  let kicked = false;
  let loopDone: Promise<void> | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (kicked || !running) {
        kicked = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        kicked = false;
        resolve();
      }
      wake = done;
    });

  return {
    publishPending,
    publishUntilAcked,

    /**
     * The worker's loop: publish now, then again after every `kick()` (a commit) and every
     * `intervalMs`; after a failure, sooner, with exponential backoff, until JetStream acks.
     */
    start(intervalMs: number): void {
      if (running) return;
      running = true;
      loopDone = (async () => {
        let failures = 0;
        while (running) {
          const summary = await publishPending();
          if (summary.error && summary.pending !== 0) {
            const delay = Math.min(intervalMs, backoff(failures++));
            if (failures === 1 || failures % 10 === 0) {
              logger.warn(
                { pending: summary.pending, reason: summary.error, retryInMs: Math.round(delay) },
                'events not yet published, retrying',
              );
            }
            await sleep(delay);
          } else {
            failures = 0;
            await sleep(intervalMs);
          }
        }
      })();
    },

    /** Publish now (after a commit) instead of at the next interval. */
    kick(): void {
      kicked = true;
      wake?.();
    },

    async stop(): Promise<void> {
      running = false;
      wake?.();
      await loopDone;
      await inFlight;
    },
  };
}

export type OutboxPublisher = ReturnType<typeof createOutboxPublisher>;
