import pRetry from 'p-retry';
import type { RefsyncWriteRepository } from '@nhp/refsync-data-access';
import { AppError, isAppError } from '@nhp/shared-errors';
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

  const retryOptions = (maxDelay: number) => ({
    retries: Number.POSITIVE_INFINITY,
    minTimeout: Math.min(baseDelayMs, maxDelay),
    maxTimeout: maxDelay,
    factor: 2,
    randomize: true,
  });

  /** One pass that throws while events stay pending, so p-retry can back off and try again. */
  async function publishOrThrow(): Promise<PublishSummary> {
    const summary = await publishPending();
    if (summary.error) throw eventsPending(summary);
    return summary;
  }

  /**
   * Retries with backoff until nothing is pending or `deadlineMs` has passed (the CLI's `--once`);
   * resolves with the last pass's summary either way.
   */
  async function publishUntilAcked(deadlineMs: number): Promise<PublishSummary> {
    try {
      return await pRetry(publishOrThrow, {
        ...retryOptions(maxDelayMs),
        maxRetryTime: deadlineMs,
        onFailedAttempt: ({ error, retryDelay }) => {
          if (retryDelay <= 0) return;
          const summary = pendingSummary(error);
          logger.warn(
            { pending: summary?.pending, reason: error.message, retryInMs: retryDelay },
            'events not yet published, retrying',
          );
        },
      });
    } catch (err) {
      return (
        pendingSummary(err) ?? {
          published: 0,
          duplicates: 0,
          pending: -1,
          error: (err as Error).message,
        }
      );
    }
  }

  let running = false;
  /** Aborted by kick() and stop(): cuts a backoff or an interval short. */
  let wake = new AbortController();
  let loopDone: Promise<void> | undefined;

  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });

  return {
    publishPending,
    publishUntilAcked,

    /**
     * The worker's loop: publish now, then again after every `kick()` (a commit) and every
     * `intervalMs`; after a failure sooner, with exponential backoff (at most `intervalMs`),
     * until JetStream acks.
     */
    start(intervalMs: number): void {
      if (running) return;
      running = true;
      loopDone = (async () => {
        while (running) {
          const signal = wake.signal;
          await pRetry(publishOrThrow, {
            ...retryOptions(Math.min(intervalMs, maxDelayMs)),
            signal,
            onFailedAttempt: ({ error, attemptNumber, retryDelay }) => {
              if (attemptNumber !== 1 && attemptNumber % 10 !== 0) return;
              logger.warn(
                {
                  pending: pendingSummary(error)?.pending,
                  reason: error.message,
                  retryInMs: retryDelay,
                },
                'events not yet published, retrying',
              );
            },
          }).catch(() => undefined); // woken by kick() or stop(): go round again, or end
          if (!running) break;
          await sleep(intervalMs, signal);
          if (signal.aborted) wake = new AbortController();
        }
      })();
    },

    /** Publish now (after a commit) instead of at the next interval or backoff step. */
    kick(): void {
      wake.abort();
    },

    async stop(): Promise<void> {
      running = false;
      wake.abort();
      await loopDone;
      await inFlight;
    },
  };
}

/** Control flow for p-retry: a pass that left events pending. */
function eventsPending(summary: PublishSummary): AppError {
  return new AppError({
    code: 'OUTBOX_EVENTS_PENDING',
    status: 503,
    category: 'unavailable',
    message: summary.error ?? 'events not acknowledged',
    details: summary,
  });
}

function pendingSummary(err: unknown): PublishSummary | undefined {
  return isAppError(err) && err.code === 'OUTBOX_EVENTS_PENDING'
    ? (err.details as PublishSummary)
    : undefined;
}

export type OutboxPublisher = ReturnType<typeof createOutboxPublisher>;
