import { STATE_COLLECTION, STATE_ID, type RefsyncWriteRepository } from '@nhp/refsync-data-access';
import type { OutboxEvent } from '@nhp/refsync-sync';
import type { Logger } from '@nhp/shared-logger';
import type { CloudEvent, NatsConnection, StreamSpec } from '@nhp/shared-messaging';
import {
  createJetStreamPublisher,
  createOutboxRelay,
  type OutboxStore,
  type PublishObserver,
  type RelaySummary,
} from '@nhp/shared-outbox';
import { refsyncStreamSpec } from './events';

export interface PublishSummary {
  published: number;
  /** Acknowledged as already in the stream (a re-publish inside the duplicate window). */
  duplicates: number;
  /** Still pending after this attempt; -1 when the outbox could not be read. */
  pending: number;
  error?: string;
}

export interface OutboxPublisherOptions {
  outbox: Pick<RefsyncWriteRepository, 'pendingEvents' | 'markEventPublished'>;
  /** The NATS connection, once there is one (the importer starts without NATS). */
  nats: () => NatsConnection | undefined;
  logger: Logger;
  /**
   * The stream the events go to (its replicas as configured), ensured before the first publish
   * and again after a failure (it may have been lost with a NATS server); default
   * refsyncStreamSpec.
   */
  stream?: StreamSpec;
  ackTimeoutMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onPublished?: (summary: PublishSummary) => void;
  /** Told of every publish and failed publish (the importer's event counters). */
  events?: PublishObserver;
}

/** The state document, as the relay names it; its events are read through the repository. */
const STATE_DOCUMENT = { collection: STATE_COLLECTION, docId: STATE_ID };

/**
 * Sends the outbox's pending events to JetStream, oldest first, each with its event id as
 * Nats-Msg-Id, and marks an event sent only after JetStream acknowledged it. A crash between the
 * ack and the mark re-sends the event later, which the stream drops as a duplicate: at least once
 * on the wire, exactly once in the stream. The relay, its retries with backoff and the JetStream
 * publish are the platform's one outbox mechanism (`@nhp/shared-outbox`).
 */
export function createOutboxPublisher(options: OutboxPublisherOptions) {
  const { outbox, logger } = options;
  const jetStream = createJetStreamPublisher({
    nats: options.nats,
    stream: options.stream ?? refsyncStreamSpec,
    logger,
    ackTimeoutMs: options.ackTimeoutMs,
    events: options.events,
  });
  const store: OutboxStore<OutboxEvent> = {
    documents: async () => [STATE_DOCUMENT],
    pending: () => outbox.pendingEvents(),
    async settle(_ref, event) {
      await outbox.markEventPublished(event.id);
    },
  };
  const relay = createOutboxRelay<OutboxEvent>({
    name: 'outbox',
    store,
    // The outbox entry is the complete CloudEvent, published as it is.
    publish: (event) => {
      const payload = event.payload as CloudEvent;
      return jetStream.publish({
        id: event.id,
        subject: event.subject,
        event: payload,
        // The run's context, as the event carries it: the publish links to the run.
        trace: { traceparent: payload.traceparent, tracestate: payload.tracestate },
      });
    },
    logger,
    // Failures are reported by the retries ("events not yet published, retrying") and summaries.
    onRelayFailed: () => undefined,
    onSwept: (relayed) => {
      const summary = publishSummary(relayed);
      if (summary.published + summary.duplicates > 0) options.onPublished?.(summary);
    },
    backoff: { baseDelayMs: options.baseDelayMs, maxDelayMs: options.maxDelayMs },
  });

  return {
    /** One pass over the pending events; concurrent callers share the pass in progress. */
    publishPending: (): Promise<PublishSummary> =>
      relay.sweep().then(publishSummary, (err: Error) => ({
        published: 0,
        duplicates: 0,
        pending: -1,
        error: err.message,
      })),

    /**
     * Retries with backoff until nothing is pending or `deadlineMs` has passed (the CLI's `--once`);
     * resolves with the last pass's summary either way.
     */
    publishUntilAcked: async (deadlineMs: number): Promise<PublishSummary> =>
      publishSummary(await relay.relayUntilDone(deadlineMs)),

    /**
     * The worker's loop: publish now, then again after every `kick()` (a commit) and every
     * `intervalMs`; after a failure sooner, with exponential backoff (at most `intervalMs`),
     * until JetStream acks.
     */
    start: (intervalMs: number): void => relay.start(intervalMs),

    /** Publish now (after a commit) instead of at the next interval or backoff step. */
    kick: (): void => relay.kick(),

    /** The app provisioned the stream itself (at connect): no need to ensure it before publishing. */
    streamProvisioned: (): void => jetStream.streamProvisioned(),

    stop: (): Promise<void> => relay.stop(),
  };
}

function publishSummary(summary: RelaySummary): PublishSummary {
  const result: PublishSummary = {
    published: summary.relayed - summary.duplicates,
    duplicates: summary.duplicates,
    pending: summary.pending ?? -1,
  };
  if (summary.error) result.error = summary.reason ?? summary.error.message;
  return result;
}

export type OutboxPublisher = ReturnType<typeof createOutboxPublisher>;
