import { componentSchemas } from '@nhp/shared-openapi';
import { z } from 'zod';
import { CLOUDEVENTS_CONTENT_TYPE, type EventDefinition } from './cloudevents';
import type { StreamSpec } from './stream';

/** One kind of event an app publishes on one channel (a NATS subject, maybe with parameters). */
export interface AsyncApiEventChannel {
  /** The channel's key in the document, e.g. `settingChanged`. */
  id: string;
  /** The NATS subject; `{name}` marks a parameter (`privacy.events.setting-changed.{partKode}`). */
  address: string;
  /** What each `{name}` of the address is. */
  parameters?: Record<string, { description: string; examples?: string[] }>;
  title: string;
  description: string;
  /** The event as the app defines and builds it (defineEvent). */
  event: EventDefinition<z.ZodType>;
  /** The message's name and its schema's component name, e.g. `SettingChangedEvent`. */
  messageName: string;
  /** The JetStream stream that keeps the subject (as the app provisions it). */
  stream: StreamSpec;
  /** How a consumer tells events apart and handles a repeat, in the document's words. */
  delivery: string;
  example?: unknown;
}

export interface AsyncApiSpec {
  /** e.g. `privacy-api events`. */
  title: string;
  version: string;
  description: string;
  /** Each becomes a channel, a `send` operation (`publish<messageName>`) and a message. */
  channels: AsyncApiEventChannel[];
}

/** ISO 8601 duration of a whole number of seconds (`PT7200S`), for the stream's limits. */
const isoDuration = (ms: number) => `PT${Math.round(ms / 1000)}S`;

/**
 * The NATS headers of every event message. A loose object: NATS or a proxy may add headers of
 * their own, which a consumer ignores.
 */
const natsHeadersSchema = z
  .looseObject({
    'Content-Type': z
      .literal(CLOUDEVENTS_CONTENT_TYPE)
      .meta({ description: 'CloudEvents structured mode: the message body is the whole event.' }),
    'Nats-Msg-Id': z.string().min(1).meta({
      description:
        "The event's `id`: JetStream drops a re-publish of it within the stream's duplicate window.",
    }),
    traceparent: z.string().min(1).optional().meta({
      description:
        'W3C trace context of the publish (while tracing is on); the change it records is in the event’s own `traceparent`.',
    }),
    tracestate: z.string().optional(),
  })
  .meta({ id: 'NatsEventHeaders', description: 'NATS message headers of every event.' });

/**
 * An AsyncAPI 3.0 document of the events an app publishes: per channel its NATS subject and
 * parameters, the JetStream stream that keeps it (`x-jetstream`), the CloudEvents attributes
 * (`x-cloudevents`) and the message: its NATS headers and its payload, the whole structured-mode
 * CloudEvent. The payload schemas are the events' own zod schemas (the ones `build` and `parse`
 * use) converted to JSON Schema in one pass, as the OpenAPI documents are made from the contracts
 * (@nhp/shared-openapi), with `source` and `type` fixed to the app's.
 */
export function asyncApiDocument(spec: AsyncApiSpec) {
  const payloads = Object.fromEntries(
    spec.channels.map((channel) => [
      channel.messageName,
      channel.event.schema.extend({
        source: z.literal(channel.event.source),
      }),
    ]),
  );
  const { defs, properties } = componentSchemas(
    { ...payloads, NatsEventHeaders: natsHeadersSchema },
    'output',
  );
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  for (const channel of spec.channels) {
    const { stream, event } = channel;
    channels[channel.id] = {
      address: channel.address,
      title: channel.title,
      description: channel.description,
      ...(channel.parameters ? { parameters: channel.parameters } : {}),
      messages: { [channel.messageName]: { $ref: `#/components/messages/${channel.messageName}` } },
      'x-jetstream': {
        stream: stream.name,
        subjects: stream.subjects,
        storage: stream.storage,
        duplicateWindow: isoDuration(stream.duplicateWindowMs),
        maxAge: isoDuration(stream.maxAgeMs),
      },
    };
    operations[`publish${channel.messageName}`] = {
      action: 'send',
      title: `Publish ${channel.title}`,
      description: channel.delivery,
      channel: { $ref: `#/channels/${channel.id}` },
      messages: [{ $ref: `#/channels/${channel.id}/messages/${channel.messageName}` }],
    };
    messages[channel.messageName] = {
      name: channel.messageName,
      title: channel.title,
      contentType: CLOUDEVENTS_CONTENT_TYPE,
      headers: { $ref: '#/components/schemas/NatsEventHeaders' },
      payload: { $ref: `#/components/schemas/${channel.messageName}` },
      correlationId: {
        description: 'The CloudEvent id, also the Nats-Msg-Id header: the de-duplication key.',
        location: '$message.payload#/id',
      },
      'x-cloudevents': {
        specversion: '1.0',
        mode: 'structured',
        type: event.type,
        source: event.source,
        datacontenttype: 'application/json',
      },
      ...(channel.example ? { examples: [{ name: 'example', payload: channel.example }] } : {}),
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: spec.title,
      version: spec.version,
      description: spec.description,
    },
    defaultContentType: CLOUDEVENTS_CONTENT_TYPE,
    channels,
    operations,
    components: {
      messages,
      schemas: { ...properties, ...defs },
    },
  };
}

export type AsyncApiDocument = ReturnType<typeof asyncApiDocument>;
