import {
  headers,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';
import { jetstream, type PubAck } from '@nats-io/jetstream';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Context,
  type Link,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { currentTraceCarrier, inSpan, spanContextOf, tracingEnabled } from '@nhp/shared-tracing';
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
  // Extension attributes. Distributed Tracing extension: the W3C context of the change the event
  // records (set when the event is built, never changed on the way).
  traceparent: z.string().min(1).optional(),
  tracestate: z.string().optional(),
  // The request id of the change (an importer event: its run id), as the services log it.
  requestid: z.string().min(1).optional(),
  data: z.unknown(),
});

export type CloudEvent<T = unknown> = Omit<z.infer<typeof cloudEventEnvelopeSchema>, 'data'> & {
  data: T;
};

/** The envelope of one kind of event: its `type` fixed, its `data` that kind's schema. */
export type EventEnvelopeSchema<S extends z.ZodType> = ReturnType<
  typeof cloudEventEnvelopeSchema.extend<{ type: z.ZodLiteral<string>; data: S }>
>;

export interface EventDefinition<S extends z.ZodType> {
  type: string;
  source: string;
  dataSchema: S;
  /**
   * The whole CloudEvent as `parse` checks it: the AsyncAPI documents describe a message with it
   * (asyncapi.ts), so the document and the events come from one schema.
   */
  schema: EventEnvelopeSchema<S>;
  /**
   * Builds a validated event; invalid data throws before anything is sent. While a span is active
   * (tracing on), the event carries its context (`traceparent`, `tracestate`).
   */
  build(
    data: z.input<S>,
    options: { id: string; time?: Date; subject?: string; requestId?: string },
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
    schema,
    build(data, { id, time = new Date(), subject, requestId }) {
      const event = {
        specversion: '1.0' as const,
        id,
        source: spec.source,
        type: spec.type,
        time: time.toISOString(),
        datacontenttype: 'application/json' as const,
        ...(subject ? { subject } : {}),
        ...currentTraceCarrier(),
        ...(requestId ? { requestid: requestId } : {}),
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
  /** Links of the publish span (an outbox relay links the change it publishes; see deferredContext). */
  links?: Link[];
}

/** Semantic-convention names of the messaging attributes (still incubating, so spelled out here). */
const MESSAGING_SYSTEM = 'messaging.system';
const MESSAGING_DESTINATION = 'messaging.destination.name';
const MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
const MESSAGING_OPERATION_NAME = 'messaging.operation.name';
const MESSAGING_MESSAGE_ID = 'messaging.message.id';

const natsHeaderSetter: TextMapSetter<MsgHdrs> = { set: (h, key, value) => h.set(key, value) };
const natsHeaderGetter: TextMapGetter<MsgHdrs | undefined> = {
  get: (h, key) => h?.get(key) || undefined,
  keys: (h) => (h ? [...h.keys()] : []),
};

/** The context the message's headers carry (`traceparent`/`tracestate`), or the root context. */
export function contextFromHeaders(h: MsgHdrs | undefined): Context {
  return tracingEnabled() ? propagation.extract(ROOT_CONTEXT, h, natsHeaderGetter) : ROOT_CONTEXT;
}

/** Adds the active context to the headers of a message about to be sent. */
export function injectTraceHeaders(h: MsgHdrs): void {
  if (tracingEnabled()) propagation.inject(context.active(), h, natsHeaderSetter);
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
  const msgID = options.msgId ?? envelope.id;
  return inSpan(
    `publish ${subject}`,
    {
      kind: SpanKind.PRODUCER,
      links: options.links ?? [],
      attributes: {
        [MESSAGING_SYSTEM]: 'nats',
        [MESSAGING_DESTINATION]: subject,
        [MESSAGING_OPERATION_TYPE]: 'send',
        [MESSAGING_OPERATION_NAME]: 'publish',
        [MESSAGING_MESSAGE_ID]: msgID,
        'cloudevents.event_id': envelope.id,
        'cloudevents.event_type': envelope.type,
      },
    },
    async (span) => {
      const h = headers();
      h.set('Content-Type', CLOUDEVENTS_CONTENT_TYPE);
      injectTraceHeaders(h);
      const ack = await jetstream(nc).publish(subject, JSON.stringify(envelope), {
        msgID,
        headers: h,
        timeout: options.timeoutMs,
      });
      span.setAttribute('messaging.nats.stream', ack.stream);
      span.setAttribute('messaging.nats.stream_sequence', ack.seq);
      span.setAttribute('messaging.nats.duplicate', ack.duplicate);
      return ack;
    },
  );
}

/**
 * The context an event is processed in: a child of the change the event records (its CloudEvents
 * `traceparent`), so that a change, its event and what every consumer did with it are one trace,
 * with a link to the publish (the message's headers) when that is another span; without the
 * extension, a child of the publish.
 */
function processingContext(
  event: { traceparent?: string | undefined; tracestate?: string | undefined },
  h: MsgHdrs | undefined,
): { parent: Context; links: Link[] } {
  const published = contextFromHeaders(h);
  const origin = spanContextOf(event);
  if (!origin) return { parent: published, links: [] };
  const publishSpan = trace.getSpanContext(published);
  return {
    parent: trace.setSpanContext(ROOT_CONTEXT, origin),
    links: publishSpan && publishSpan.spanId !== origin.spanId ? [{ context: publishSpan }] : [],
  };
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
      const { parent, links } = processingContext(event, msg.headers);
      inSpan(
        `process ${subject}`,
        {
          kind: SpanKind.CONSUMER,
          links,
          attributes: {
            [MESSAGING_SYSTEM]: 'nats',
            [MESSAGING_DESTINATION]: subject,
            [MESSAGING_OPERATION_TYPE]: 'process',
            [MESSAGING_OPERATION_NAME]: 'process',
            'cloudevents.event_id': event.id,
            'cloudevents.event_type': event.type,
          },
        },
        async () => handler(event),
        parent,
      ).catch((handlerErr: unknown) =>
        logger?.error({ err: handlerErr, subject, eventId: event.id }, 'event handler failed'),
      );
    },
  });
}
