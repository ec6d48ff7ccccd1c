import type { Logger } from '@nhp/shared-logger';
import {
  ensureStream,
  natsIsConnected,
  publishCloudEvent,
  type CloudEvent,
  type EventDefinition,
  type NatsConnection,
  type StreamSpec,
} from '@nhp/shared-messaging';
import { deferredContext, type TraceCarrier } from '@nhp/shared-tracing';
import { context } from '@opentelemetry/api';
import type { z } from 'zod';

/** One event as an outbox publishes it. */
export interface OutboxMessage {
  /** The Nats-Msg-Id (the entry's and the event's id): JetStream drops a repeat as a duplicate. */
  id: string;
  subject: string;
  event: CloudEvent;
  /** When given, the event is checked against its contract once more before it leaves. */
  eventDef?: EventDefinition<z.ZodType>;
  /**
   * The context of the change that recorded the event (stored with the entry): the publish span
   * is its child while that trace is active, and otherwise links to it (see deferredContext).
   */
  trace?: TraceCarrier;
}

export interface PublishedAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

export interface JetStreamPublisherOptions {
  /** The NATS connection, once there is one (services start without NATS). */
  nats: () => NatsConnection | undefined;
  /** Ensured before the first publish and again after a failure (it may be lost with a server). */
  stream: StreamSpec;
  logger: Logger;
  /** How long to wait for the stream's acknowledgement (default 5000 ms). */
  ackTimeoutMs?: number;
  /** The level of the "event published" line (default info). */
  publishedLogLevel?: 'info' | 'debug';
  /** Told of every publish by the event's type (metrics: @nhp/shared-metrics' eventCounters). */
  events?: PublishObserver;
}

/** What a publisher reports of each publish, by the CloudEvents type of the event. */
export interface PublishObserver {
  /** JetStream acknowledged the event as new (a duplicate it dropped is not reported). */
  published(eventType: string): void;
  /** The publish failed: NATS not connected, the stream not ready, no acknowledgement in time. */
  failed(eventType: string): void;
}

export interface JetStreamPublisher {
  /**
   * Publishes through JetStream with Nats-Msg-Id = message.id and resolves with the stream's
   * acknowledgement. Throws when NATS is not connected, the stream cannot be ensured, or no
   * acknowledgement came in time.
   */
  publish(message: OutboxMessage): Promise<PublishedAck>;
  /** The stream was provisioned elsewhere (at connect): the next publish need not ensure it. */
  streamProvisioned(): void;
}

export function createJetStreamPublisher(options: JetStreamPublisherOptions): JetStreamPublisher {
  const { logger, stream } = options;
  const level = options.publishedLogLevel ?? 'info';
  let streamReady: Promise<unknown> | undefined;

  function ensure(nc: NatsConnection): Promise<unknown> {
    streamReady ??= ensureStream(nc, stream).then(
      (info) => {
        logger.info({ stream: stream.name, subjects: stream.subjects }, 'JetStream stream ready');
        return info;
      },
      (err: unknown) => {
        throw new Error(`JetStream not ready: ${(err as Error).message}`, { cause: err });
      },
    );
    return streamReady;
  }

  return {
    async publish(message) {
      const nc = options.nats();
      if (!nc || !natsIsConnected(nc)) {
        options.events?.failed(message.event.type);
        throw new Error('NATS is not connected');
      }
      try {
        await ensure(nc);
        const deferred = deferredContext(message.trace);
        const ack = await context.with(deferred.context, () =>
          publishCloudEvent(nc, message.subject, message.event, {
            msgId: message.id,
            timeoutMs: options.ackTimeoutMs ?? 5000,
            links: deferred.links,
            ...(message.eventDef ? { eventDef: message.eventDef } : {}),
          }),
        );
        logger[level](
          {
            eventId: message.id,
            subject: message.subject,
            stream: ack.stream,
            seq: ack.seq,
            duplicate: ack.duplicate,
          },
          'event published',
        );
        if (!ack.duplicate) options.events?.published(message.event.type);
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (err) {
        // The stream may have been lost with a NATS server: ensure it again before the next try.
        streamReady = undefined;
        options.events?.failed(message.event.type);
        throw err;
      }
    },

    streamProvisioned() {
      streamReady = Promise.resolve();
    },
  };
}
