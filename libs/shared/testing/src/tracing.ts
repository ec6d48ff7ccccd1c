import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTracing, type Tracing } from '@nhp/shared-tracing';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A span as a test reads it, from the in-memory exporter or from the OTLP receiver. */
export interface RecordedSpan {
  service: string | undefined;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  links: { traceId: string; spanId: string }[];
  attributes: Record<string, unknown>;
  /** Start and end in milliseconds since the epoch (spans recorded in process). */
  startTime?: number;
  endTime?: number;
}

export interface SpanRecorder {
  readonly tracing: Tracing;
  /** Every span ended so far in this process (this test file). */
  spans(): RecordedSpan[];
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for this test file with the SDK's in-memory exporter: the code under test
 * makes its spans exactly as in production (startTracing), and the test reads every one ended.
 */
export function recordSpans(serviceName = 'test'): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({
    serviceName,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return {
    tracing,
    spans: () => exporter.getFinishedSpans().map(fromReadable),
    shutdown: () => tracing.shutdown(),
  };
}

function fromReadable(span: ReadableSpan): RecordedSpan {
  return {
    service: span.resource.attributes['service.name'] as string | undefined,
    name: span.name,
    kind: span.kind + 1,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
    attributes: { ...span.attributes },
    startTime: hrTimeToMilliseconds(span.startTime),
    endTime: hrTimeToMilliseconds(span.endTime),
  };
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the apps' OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  /** Every span received so far. */
  spans(): RecordedSpan[];
  stop(): Promise<void>;
}

/**
 * A stand-in for an OpenTelemetry collector on loopback: accepts OTLP/HTTP JSON exports
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) at /v1/traces, for tests that run the apps as
 * processes and read the spans they export.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: RecordedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        try {
          received.push(...parseOtlpJson(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        } catch {
          res.writeHead(400).end();
          return;
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}

function valueOf(v: OtlpValue): unknown {
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

/** OTLP/JSON ids are hex; a base64 one (a protobuf-JSON encoder) is turned into hex. */
function hexId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  if (/^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

function parseOtlpJson(body: {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpKeyValue[];
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}): RecordedSpan[] {
  const out: RecordedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = attributesOf(rs.resource?.attributes)['service.name'] as string | undefined;
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          service,
          name: s.name,
          kind: s.kind,
          traceId: hexId(s.traceId) as string,
          spanId: hexId(s.spanId) as string,
          parentSpanId: hexId(s.parentSpanId),
          links: (s.links ?? []).map((l) => ({
            traceId: hexId(l.traceId) as string,
            spanId: hexId(l.spanId) as string,
          })),
          attributes: attributesOf(s.attributes),
        });
      }
    }
  }
  return out;
}

/** A standalone 11-digit number: the shape of a national identity number (fødselsnummer). */
const IDENTITY_NUMBER = /(?<![0-9A-Za-z])\d{11}(?![0-9A-Za-z])/;
/** Credentials by their shape: a JWT (any token or proof), an Authorization scheme. */
const CREDENTIAL = /eyJ[\w-]+\.[\w-]+|^(bearer|dpop|basic)\s/i;

/**
 * Every attribute of every span that holds an identity number, a credential, or one of the given
 * values (the test's tokens, keys and identity numbers): `span name: key=value` lines, none when
 * the spans are clean.
 */
export function sensitiveAttributes(
  spans: readonly RecordedSpan[],
  secrets: readonly string[] = [],
): string[] {
  const found: string[] = [];
  for (const span of spans) {
    for (const [key, value] of Object.entries(span.attributes)) {
      const texts = (Array.isArray(value) ? value : [value]).map((v) => String(v));
      for (const text of texts) {
        if (
          IDENTITY_NUMBER.test(text) ||
          CREDENTIAL.test(text) ||
          secrets.some((s) => s.length > 0 && text.includes(s))
        ) {
          found.push(`${span.name}: ${key}=${text}`);
        }
      }
    }
  }
  return found;
}
