import { headers, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { jetstream, type PubAck } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { z } from 'zod';

/** CloudEvents 1.0 structured-mode JSON content type (CloudEvents JSON format, section 4). */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json';

/** The context attributes we emit and require (CloudEvents 1.0 spec, "Context Attributes"). */
export const cloudEventEnvelopeSchema = z.object({
  specversion: z.literal('1.0'),
  id: z.string().min(1),
  source: z.string().min(1),
  type: z.string().min(1),
  time: z.iso.datetime({ offset: true }).optional(),
  subject: z.string().min(1).optional(),
  datacontenttype: z.literal('application/json').optional(),
  data: z.unknown(),
});

export type CloudEvent<T = unknown> = Omit<z.infer<typeof cloudEventEnvelopeSchema>, 'data'> & {
  data: T;
};

export interface EventDefinition<S extends z.ZodType> {
  type: string;
  source: string;
  dataSchema: S;
  /** Builds a validated event; invalid data throws before anything is sent. */
  build(
    data: z.input<S>,
    options: { id: string; time?: Date; subject?: string },
  ): CloudEvent<z.output<S>>;
  /** Parses bytes, a JSON string or an object; throws a ZodError or SyntaxError when invalid. */
  parse(input: Uint8Array | string | unknown): CloudEvent<z.output<S>>;
}

export function defineEvent<S extends z.ZodType>(spec: {
  type: string;
  source: string;
  dataSchema: S;
}): EventDefinition<S> {
  const schema = cloudEventEnvelopeSchema.extend({
    type: z.literal(spec.type),
    data: spec.dataSchema,
  });
  return {
    ...spec,
    build(data, { id, time = new Date(), subject }) {
      const event = {
        specversion: '1.0' as const,
        id,
        source: spec.source,
        type: spec.type,
        time: time.toISOString(),
        datacontenttype: 'application/json' as const,
        ...(subject ? { subject } : {}),
        data: spec.dataSchema.parse(data),
      };
      return event as CloudEvent<z.output<S>>;
    },
    parse(input) {
      return schema.parse(decodeJson(input)) as CloudEvent<z.output<S>>;
    },
  };
}

function decodeJson(input: unknown): unknown {
  if (input instanceof Uint8Array) return JSON.parse(Buffer.from(input).toString('utf8'));
  if (typeof input === 'string') return JSON.parse(input);
  return input;
}

export interface PublishOptions {
  /** De-duplication key for JetStream; defaults to the event id. */
  msgId?: string;
  /** When given, the event's data is validated again before sending. */
  eventDef?: EventDefinition<z.ZodType>;
  /** How long to wait for the JetStream acknowledgement. */
  timeoutMs?: number;
}

/**
 * Publishes through JetStream and waits for the stream's acknowledgement. `Nats-Msg-Id` makes a
 * re-publish of the same event inside the stream's duplicate window a no-op (`ack.duplicate`).
 */
export async function publishCloudEvent(
  nc: NatsConnection,
  subject: string,
  event: CloudEvent,
  options: PublishOptions = {},
): Promise<PubAck> {
  const envelope = options.eventDef
    ? options.eventDef.parse(event)
    : cloudEventEnvelopeSchema.parse(event);
  const h = headers();
  h.set('Content-Type', CLOUDEVENTS_CONTENT_TYPE);
  return jetstream(nc).publish(subject, JSON.stringify(envelope), {
    msgID: options.msgId ?? envelope.id,
    headers: h,
    timeout: options.timeoutMs,
  });
}

/**
 * Core-NATS subscription for in-process cache invalidation and the like (no persistence needed:
 * missed events are covered by the subscriber's own periodic checks). Durable consumers belong to
 * downstream services and use a JetStream consumer on the stream instead.
 */
export function subscribeCloudEvents<S extends z.ZodType>(
  nc: NatsConnection,
  subject: string,
  eventDef: EventDefinition<S>,
  handler: (event: CloudEvent<z.output<S>>) => void | Promise<void>,
  logger?: Logger,
): Subscription {
  return nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) {
        logger?.warn({ err, subject }, 'event subscription error');
        return;
      }
      let event: CloudEvent<z.output<S>>;
      try {
        event = eventDef.parse(msg.data);
      } catch (parseErr) {
        logger?.warn({ err: parseErr, subject }, 'ignoring invalid event');
        return;
      }
      Promise.resolve(handler(event)).catch((handlerErr) =>
        logger?.error({ err: handlerErr, subject, eventId: event.id }, 'event handler failed'),
      );
    },
  });
}
