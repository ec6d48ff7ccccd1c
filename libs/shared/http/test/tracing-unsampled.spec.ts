import { createServer, type Server } from 'node:http';
import { context, trace } from '@opentelemetry/api';
import { recordSpans } from '@nhp/shared-testing';
import { traceHttpRequests } from '@nhp/shared-tracing';
import request from 'supertest';
import { closeServer, listen, serverPort } from '../src';
import { buildApp, plainFormatter, settle } from './support';

// Tracing on with a sampler that records no request of its own (as a 10% ratio does for most):
// such a request is not entered when it arrives (its promises carry no context), and is entered
// before the routes, so that what they log, store or publish still carries its trace.
process.env['OTEL_TRACES_SAMPLER'] = 'parentbased_always_off';
const recorder = recordSpans('shared-http-unsampled');
afterAll(async () => {
  await recorder.shutdown();
  delete process.env['OTEL_TRACES_SAMPLER'];
});

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const HEX_TRACE_ID = /^[0-9a-f]{32}$/;

describe('unsampled requests (tracing on, nothing sampled)', () => {
  let server: Server;
  const { app, logs } = buildApp({
    errorFormatter: plainFormatter,
    routes: (a) => {
      a.post('/things', (req, res) => {
        req.log.info({ body: req.body as unknown }, 'handling');
        res.json({ ok: true });
      });
    },
  });

  beforeAll(async () => {
    server = await listen(app, 0, '127.0.0.1');
  });
  afterAll(() => closeServer(server, 0));

  it('when a request continues no trace and is not sampled, then its route still runs in its trace: log lines carry the trace, and nothing is recorded', async () => {
    const url = `http://127.0.0.1:${serverPort(server)}`;
    await request(url).post('/things').send({ a: 1 }).expect(200);
    await settle();
    const line = logs.lines().find((l) => l['msg'] === 'handling');
    expect(line?.['trace_id']).toMatch(HEX_TRACE_ID);
    expect(recorder.spans()).toEqual([]);
  });

  it('when a request carries an unsampled traceparent, then its route runs in that trace', async () => {
    const url = `http://127.0.0.1:${serverPort(server)}`;
    await request(url)
      .post('/things')
      .set('traceparent', `00-${TRACE_ID}-b7ad6b7169203331-00`)
      .send({ b: 2 })
      .expect(200);
    await settle();
    const line = logs
      .lines()
      .find((l) => l['msg'] === 'handling' && (l['body'] as { b?: number } | undefined)?.b === 2);
    expect(line?.['trace_id']).toBe(TRACE_ID);
    expect(recorder.spans()).toEqual([]);
  });

  it('when a request continues no trace and is not sampled, then the listener runs in no context; with a caller’s trace, in that trace', async () => {
    const seen: Array<string | undefined> = [];
    const bare = createServer(
      traceHttpRequests((_req, res) => {
        seen.push(trace.getSpanContext(context.active())?.traceId);
        res.end();
      }),
    );
    const port = await new Promise<number>((resolve) =>
      bare.listen(0, '127.0.0.1', () => resolve((bare.address() as { port: number }).port)),
    );
    try {
      await request(`http://127.0.0.1:${port}`).get('/').expect(200);
      await request(`http://127.0.0.1:${port}`)
        .get('/')
        .set('traceparent', `00-${TRACE_ID}-b7ad6b7169203331-00`)
        .expect(200);
    } finally {
      await new Promise((resolve) => bare.close(resolve));
    }
    expect(seen).toEqual([undefined, TRACE_ID]);
  });
});
