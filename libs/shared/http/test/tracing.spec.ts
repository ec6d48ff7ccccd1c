import type { Server } from 'node:http';
import { context, propagation } from '@opentelemetry/api';
import { recordSpans, sensitiveAttributes } from '@nhp/shared-testing';
import { inSpan } from '@nhp/shared-tracing';
import request from 'supertest';
import { closeServer, listen, serverPort } from '../src';
import { buildApp, plainFormatter, settle } from './support';

// Tracing on for this file, with the SDK's in-memory exporter.
const recorder = recordSpans('shared-http-test');
afterAll(() => recorder.shutdown());

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';
const FNR = '01017012345';

describe('request spans (tracing on)', () => {
  let server: Server;
  const { app, logs } = buildApp({
    errorFormatter: plainFormatter,
    routes: (a) => {
      a.get('/people/:fnr/settings', (req, res) => {
        req.log.info('handling');
        res.json({ ok: true });
      });
      a.get('/people/:fnr/nested', async (req, res) => {
        req.log.info({ outer: true }, 'nested');
        await inSpan('nested work', {}, async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          req.log.info({ child: true }, 'nested');
        });
        res.json({ ok: true });
      });
      a.get('/baggage', (_req, res) => {
        res.json({ tenant: propagation.getBaggage(context.active())?.getEntry('tenant')?.value });
      });
      a.get('/boom', () => {
        throw new Error('kaboom');
      });
    },
  });

  beforeAll(async () => {
    server = await listen(app, 0, '127.0.0.1');
  });
  afterAll(() => closeServer(server, 0));

  it('when a request carries a traceparent, then its SERVER span continues that trace and names the route template, never the URL', async () => {
    const url = `http://127.0.0.1:${serverPort(server)}`;
    await request(url)
      .get(`/people/${FNR}/settings?token=secret-value`)
      .set('traceparent', `00-${TRACE_ID}-${PARENT_ID}-01`)
      .set('Authorization', 'Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.sig')
      .expect(200);
    await settle();

    const span = recorder.spans().find((s) => s.traceId === TRACE_ID);
    expect(span).toMatchObject({
      name: 'GET /people/:fnr/settings',
      kind: 2,
      parentSpanId: PARENT_ID,
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/people/:fnr/settings',
        'http.response.status_code': 200,
      },
    });
    expect(JSON.stringify(span)).not.toContain(FNR);
    expect(JSON.stringify(span)).not.toContain('secret-value');
    expect(sensitiveAttributes(recorder.spans(), [FNR, 'secret-value'])).toEqual([]);

    // Log lines inside the request carry its span beside the request id.
    const line = logs.lines().find((l) => l['msg'] === 'handling');
    expect(line).toMatchObject({ trace_id: TRACE_ID, span_id: span?.spanId });
    expect(typeof (line as { req?: { id?: unknown } }).req?.id).toBe('string');
  });

  it('when a request starts a trace and is sampled, then its span (made after it ended) has the ids its log lines and child spans named', async () => {
    const url = `http://127.0.0.1:${serverPort(server)}`;
    const res = await request(url).get(`/people/${FNR}/nested`).expect(200);
    await settle();
    const requestId = res.headers['x-request-id'];
    const outer = logs.lines().find((l) => l['msg'] === 'nested' && l['outer'] === true);
    const inner = logs.lines().find((l) => l['msg'] === 'nested' && l['child'] === true);
    const span = recorder
      .spans()
      .find(
        (s) => (s.attributes['http.response.header.x-request-id'] as string[])?.[0] === requestId,
      );
    expect(span).toMatchObject({
      name: 'GET /people/:fnr/nested',
      kind: 2,
      parentSpanId: undefined,
      attributes: {
        'http.request.method': 'GET',
        'url.scheme': 'http',
        'http.route': '/people/:fnr/nested',
        'http.response.status_code': 200,
      },
    });
    expect(outer).toMatchObject({ trace_id: span?.traceId, span_id: span?.spanId });
    const child = recorder.spans().find((s) => s.name === 'nested work');
    expect(child).toMatchObject({ traceId: span?.traceId, parentSpanId: span?.spanId });
    expect(inner).toMatchObject({ trace_id: span?.traceId, span_id: child?.spanId });
    // It lasted as long as the request, so at least as long as its child (each span's duration is
    // measured on the monotonic clock; the SDK places each on the wall clock with its own reading,
    // in whole milliseconds, so start and end times of two spans are only comparable to 1 ms).
    const duration = (s: typeof span) => (s?.endTime as number) - (s?.startTime as number);
    expect(duration(child)).toBeGreaterThanOrEqual(4);
    expect(duration(span)).toBeGreaterThanOrEqual(duration(child));
    expect(span?.startTime).toBeLessThanOrEqual((child?.startTime as number) + 1);
  });

  it('when a request carries baggage and no traceparent, then its route runs with that baggage', async () => {
    // The wrapper skips extraction only for a request with none of the propagators' headers.
    const url = `http://127.0.0.1:${serverPort(server)}`;
    const res = await request(url).get('/baggage').set('baggage', 'tenant=hn').expect(200);
    expect(res.body).toEqual({ tenant: 'hn' });
    const plain = await request(url).get('/baggage').expect(200);
    expect(plain.body).toEqual({});
  });

  it('when the app fails with a 500, then the span is marked failed with the status as its error type', async () => {
    const url = `http://127.0.0.1:${serverPort(server)}`;
    const res = await request(url).get('/boom').expect(500);
    await settle();
    const requestId = res.headers['x-request-id'];
    const span = recorder
      .spans()
      .find(
        (s) => (s.attributes['http.response.header.x-request-id'] as string[])?.[0] === requestId,
      );
    expect(span?.attributes).toMatchObject({
      'http.response.status_code': 500,
      'error.type': '500',
    });
  });

  it('when no route matches, then the span is named by the method alone', async () => {
    const url = `http://127.0.0.1:${serverPort(server)}`;
    const res = await request(url).get('/nowhere/01017012345').expect(404);
    await settle();
    const span = recorder
      .spans()
      .find(
        (s) =>
          (s.attributes['http.response.header.x-request-id'] as string[])?.[0] ===
          res.headers['x-request-id'],
      );
    expect(span?.name).toBe('GET');
    expect(span?.attributes['http.route']).toBeUndefined();
  });
});
