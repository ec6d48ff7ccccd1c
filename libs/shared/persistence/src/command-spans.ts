import type { Attributes, Span } from '@opentelemetry/api';
import { SpanKind, type Context } from '@opentelemetry/api';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_BATCH_SIZE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_RESPONSE_STATUS_CODE,
  ATTR_DB_SYSTEM_NAME,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import { activeSpanSampled, failSpan, tracer } from '@nhp/shared-tracing';
import type {
  CommandFailedEvent,
  CommandStartedEvent,
  CommandSucceededEvent,
  MongoClient,
} from 'mongodb';

/** Spans begun but not yet ended; a bound, so a command whose end never comes cannot pile up. */
const MAX_OPEN = 10_000;

/**
 * A CLIENT span per MongoDB command, from the driver's command monitoring events
 * (`monitorCommands: true`, set by connectMongo while tracing is on).
 *
 * Why not @opentelemetry/instrumentation-mongodb: it patches the driver's internal files
 * (`mongodb/lib/cmap/connection.js`) through require hooks, which sees neither Jest's module
 * registry nor a module loaded before the SDK, and it would be patching a driver we already patch
 * (patches/README.md); the command monitoring events are the driver's public, supported way to
 * observe every command, and work the same under tsx, Jest and the bundle.
 *
 * A span is made only under an active span that is sampled (a request, an importer run, a relay):
 * the background work of the driver and of the periodic checks would otherwise be a trace per
 * command, and under an unsampled span it would record nothing. Attributes name the operation, the
 * database, the collection and the server, never the command's text (filters and documents hold
 * identity numbers) or an error's message.
 */
export function traceMongoCommands(client: MongoClient): void {
  const open = new Map<string, Span>();
  const key = (event: { address: string; requestId: number }) =>
    `${event.address}#${event.requestId}`;

  client.on('commandStarted', (event: CommandStartedEvent) => {
    // Under an unsampled span a child would record nothing: none is made (see activeSpanSampled).
    if (!activeSpanSampled()) return;
    if (open.size >= MAX_OPEN) open.clear();
    const span = startCommandSpan({
      databaseName: event.databaseName,
      commandName: event.commandName,
      collection: collectionOf(event),
      address: event.address,
    });
    open.set(key(event), span);
  });

  client.on('commandSucceeded', (event: CommandSucceededEvent) => {
    const span = open.get(key(event));
    if (!span) return;
    open.delete(key(event));
    span.end();
  });

  client.on('commandFailed', (event: CommandFailedEvent) => {
    const span = open.get(key(event));
    if (!span) return;
    open.delete(key(event));
    const code = (event.failure as { code?: unknown }).code;
    if (typeof code === 'number') span.setAttribute(ATTR_DB_RESPONSE_STATUS_CODE, String(code));
    failSpan(span, event.failure);
    span.end();
  });
}

/** What a MongoDB command's span names (never the command's text). */
export interface CommandSpanFields {
  databaseName: string;
  commandName: string;
  collection?: string | undefined;
  /** host:port of the server it went to, when known. */
  address?: string | undefined;
  /** How many operations the one command carries (`db.operation.batch.size`), when several. */
  batchSize?: number;
}

/** A CLIENT span for a MongoDB command, a child of `parent` (default: the active context). */
export function startCommandSpan(fields: CommandSpanFields, parent?: Context): Span {
  return tracer().startSpan(
    commandSpanName(fields),
    { kind: SpanKind.CLIENT, attributes: commandSpanAttributes(fields) },
    parent,
  );
}

/** A command span's name: the command and the collection it names. */
export function commandSpanName(fields: CommandSpanFields): string {
  return fields.collection ? `${fields.commandName} ${fields.collection}` : fields.commandName;
}

/** A command span's attributes (see CommandSpanFields). */
export function commandSpanAttributes(fields: CommandSpanFields): Attributes {
  const { collection } = fields;
  const [host, port] = fields.address ? splitAddress(fields.address) : [undefined, undefined];
  return {
    [ATTR_DB_SYSTEM_NAME]: 'mongodb',
    [ATTR_DB_NAMESPACE]: fields.databaseName,
    [ATTR_DB_OPERATION_NAME]: fields.commandName,
    ...(collection ? { [ATTR_DB_COLLECTION_NAME]: collection } : {}),
    ...(host ? { [ATTR_SERVER_ADDRESS]: host } : {}),
    ...(port ? { [ATTR_SERVER_PORT]: port } : {}),
    ...(fields.batchSize ? { [ATTR_DB_OPERATION_BATCH_SIZE]: fields.batchSize } : {}),
  };
}

/** The collection a command names: its first field's value (find, insert, update, aggregate...). */
function collectionOf(event: CommandStartedEvent): string | undefined {
  const command = event.command as Record<string, unknown>;
  if (event.commandName === 'getMore' && typeof command['collection'] === 'string') {
    return command['collection'];
  }
  const value = command[event.commandName];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function splitAddress(address: string): [string | undefined, number | undefined] {
  const colon = address.lastIndexOf(':');
  if (colon <= 0) return [address || undefined, undefined];
  const port = Number(address.slice(colon + 1));
  return [
    address.slice(0, colon).replace(/^\[|\]$/g, ''),
    Number.isInteger(port) ? port : undefined,
  ];
}
