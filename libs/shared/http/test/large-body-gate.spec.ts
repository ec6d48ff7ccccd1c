import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { largeBodyGate, type LargeBodyGate } from '../src';
import { buildApp, plainFormatter } from './support';

const LARGE = 300 * 1024;
const largeBody = () => JSON.stringify({ data: 'x'.repeat(LARGE) });

/** Resolves once `condition` holds, checked after each turn of the event loop (no timing). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A handler that holds each request until the test lets it go, so that the test decides how long
 * a large body keeps its place.
 */
function heldHandler() {
  const held: Array<() => void> = [];
  const handler: RequestHandler = (req, res) => {
    held.push(() => res.json({ size: JSON.stringify(req.body).length }));
  };
  return { handler, held };
}

async function serve(app: http.RequestListener): Promise<{ server: Server; port: number }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A POST with a JSON body, answered as { status, body }; `destroy` aborts it. */
function post(port: number, body: string, headers: Record<string, string> = {}) {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/upload',
    agent: false,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode as number, headers: res.headers, body: text }),
        );
      });
      req.on('error', reject);
    },
  );
  // Requests a test leaves unanswered end with the server: not an unhandled rejection.
  answer.catch(() => undefined);
  req.end(body);
  return { answer, destroy: () => req.destroy() };
}

describe('large body gate', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  function gatedApp(options: Partial<Parameters<typeof largeBodyGate>[0]> = {}) {
    const gate: LargeBodyGate = largeBodyGate({ above: 1024, concurrent: 1, ...options });
    const { handler, held } = heldHandler();
    const app = express();
    app.use(gate);
    app.use(express.json({ limit: '1mb' }));
    app.post('/upload', handler);
    app.use(((err, _req, res, _next) => {
      const e = err as { status: number; code: string; headers?: Record<string, string> };
      res.set(e.headers ?? {});
      res.status(e.status).json({ code: e.code });
    }) as express.ErrorRequestHandler);
    return { app, gate, held };
  }

  it('when more large bodies arrive than may be handled at once, then the next one waits unread and is served once a place frees', async () => {
    const { app, gate, held } = gatedApp();
    const started = await serve(app);
    server = started.server;
    const first = post(started.port, largeBody());
    await until(() => held.length === 1);
    const second = post(started.port, largeBody());
    await until(() => gate.stats().waiting === 1);
    expect(held).toHaveLength(1);
    expect(gate.stats()).toMatchObject({ active: 1, waiting: 1 });

    (held[0] as () => void)();
    expect((await first.answer).status).toBe(200);
    await until(() => held.length === 2);
    (held[1] as () => void)();
    const answer = await second.answer;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ size: largeBody().length });
    await until(() => gate.stats().active === 0);
  });

  it('when a large request has been answered, then it lets go of its parsed body, so a connection kept open does not keep the body alive', async () => {
    const gate = largeBodyGate({ above: 1024, concurrent: 1 });
    const seen: Array<{ req: { body?: unknown }; large: boolean }> = [];
    const app = express();
    app.use(gate);
    app.use(express.json({ limit: '1mb' }));
    app.post('/upload', (req, res) => {
      seen.push({ req, large: Number(req.headers['content-length']) > 1024 });
      res.json({ size: JSON.stringify(req.body).length });
    });
    const started = await serve(app);
    server = started.server;
    const large = post(started.port, largeBody());
    const small = post(started.port, JSON.stringify({ small: true }));
    expect((await large.answer).status).toBe(200);
    expect((await small.answer).status).toBe(200);
    await until(() => gate.stats().active === 0 && seen.length === 2);
    const largeOne = seen.find((r) => r.large)?.req;
    const smallOne = seen.find((r) => !r.large)?.req;
    expect(largeOne).toBeDefined();
    expect(largeOne?.body).toBeUndefined();
    // A small body is not the gate's: it stays as Express left it.
    expect(smallOne?.body).toEqual({ small: true });
  });

  it('when a body is small, then it passes while the large ones wait', async () => {
    const { app, gate, held } = gatedApp();
    const started = await serve(app);
    server = started.server;
    post(started.port, largeBody());
    await until(() => held.length === 1);
    post(started.port, largeBody());
    await until(() => gate.stats().waiting === 1);
    post(started.port, JSON.stringify({ small: true }));
    await until(() => held.length === 2);
    (held[1] as () => void)();
    expect(gate.stats()).toMatchObject({ active: 1, waiting: 1 });
  });

  it('when a waiting client disconnects, then its place in the queue is freed for the next one', async () => {
    const { app, gate, held } = gatedApp();
    const started = await serve(app);
    server = started.server;
    post(started.port, largeBody());
    await until(() => held.length === 1);
    // Headers and the start of a large body, then the client goes away.
    const leaving = http.request({
      host: '127.0.0.1',
      port: started.port,
      method: 'POST',
      path: '/upload',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': String(LARGE) },
    });
    leaving.on('error', () => undefined);
    leaving.write('{"data":"');
    await until(() => gate.stats().waiting === 1);
    leaving.destroy();
    await until(() => gate.stats().waiting === 0);

    const third = post(started.port, largeBody());
    await until(() => gate.stats().waiting === 1);
    (held[0] as () => void)();
    await until(() => held.length === 2);
    (held[1] as () => void)();
    expect((await third.answer).status).toBe(200);
  });

  it('when a client with a place disconnects before its answer, then its place goes to the next one', async () => {
    const { app, gate, held } = gatedApp();
    const started = await serve(app);
    server = started.server;
    const first = post(started.port, largeBody());
    await until(() => held.length === 1);
    const second = post(started.port, largeBody());
    await until(() => gate.stats().waiting === 1);
    first.destroy();
    await until(() => held.length === 2);
    (held[1] as () => void)();
    expect((await second.answer).status).toBe(200);
  });

  it('when a request waits longer than maxWaitMs, then it is answered 503 SERVER_BUSY with Retry-After and the others go on', async () => {
    const { app, gate, held } = gatedApp({ maxWaitMs: 20 });
    const started = await serve(app);
    server = started.server;
    const first = post(started.port, largeBody());
    await until(() => held.length === 1);
    const answer = await post(started.port, largeBody()).answer;
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(JSON.parse(answer.body)).toEqual({ code: 'SERVER_BUSY' });
    expect(gate.stats()).toMatchObject({ active: 1, waiting: 0, refused: 1 });
    (held[0] as () => void)();
    expect((await first.answer).status).toBe(200);
  });

  it('when maxWaiting requests wait already, then one more is answered 503 at once', async () => {
    const { app, held } = gatedApp({ maxWaiting: 0 });
    const started = await serve(app);
    server = started.server;
    post(started.port, largeBody());
    await until(() => held.length === 1);
    expect((await post(started.port, largeBody()).answer).status).toBe(503);
  });

  it('when the size is unknown (chunked or compressed), then the body counts as large', async () => {
    const { app, gate, held } = gatedApp();
    const started = await serve(app);
    server = started.server;
    post(started.port, largeBody());
    await until(() => held.length === 1);
    post(started.port, '{}', { 'transfer-encoding': 'chunked' });
    await until(() => gate.stats().waiting === 1);
    post(started.port, '{}', { 'content-encoding': 'gzip', 'content-length': '2' });
    await until(() => gate.stats().waiting === 2);
  });
});

describe('createHttpApp with largeBodies', () => {
  it('when a route takes large bodies, then they are gated, and a route with the small limit is not', async () => {
    const { handler, held } = heldHandler();
    const { app } = buildApp({
      errorFormatter: plainFormatter,
      bodyLimit: (req) => (req.path === '/upload' ? 1024 * 1024 : 1024),
      largeBodies: { above: 1024, concurrent: 1, maxWaitMs: 20 },
      routes: (a) => {
        a.post('/upload', handler);
        a.post('/small', (_req, res) => res.json({ ok: true }));
      },
    });
    const { server, port } = await serve(app);
    try {
      post(port, largeBody());
      await until(() => held.length === 1);
      const busy = await post(port, largeBody()).answer;
      expect(busy.status).toBe(503);
      expect(JSON.parse(busy.body)).toMatchObject({ code: 'SERVER_BUSY', category: 'unavailable' });
      // Over the small route's limit: refused at once as too large, not made to wait.
      const small = await request(app)
        .post('/small')
        .send({ data: 'x'.repeat(2000) });
      expect(small.status).toBe(413);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** A chunked POST that sends a few bytes of its body and then nothing more (until destroyed). */
function stalledPost(port: number, headers: Record<string, string> = {}) {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/upload',
    agent: false,
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', ...headers },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode as number, body: text }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  req.write('{"a":');
  return {
    answer,
    destroy: () => req.destroy(),
    write: (text: string) => req.write(text),
    end: (text: string) => req.end(text),
  };
}

describe('a stalled sender and the large body gate', () => {
  it('when senders holding every place stop sending, then after stallMs they are answered 408 and the next large body is served', async () => {
    const { handler, held } = heldHandler();
    const { app } = buildApp({
      errorFormatter: plainFormatter,
      bodyLimit: 1024 * 1024,
      largeBodies: { above: 1024, concurrent: 2, maxWaitMs: 5_000, stallMs: 300 },
      routes: (a) => a.post('/upload', handler),
    });
    const { server, port } = await serve(app);
    const stalled = [stalledPost(port), stalledPost(port)];
    try {
      const next = post(port, largeBody());
      for (const s of stalled) {
        const answer = await s.answer;
        expect(answer.status).toBe(408);
        expect(JSON.parse(answer.body)).toMatchObject({ code: 'REQUEST_TIMEOUT' });
      }
      await until(() => held.length === 1);
      (held[0] as () => void)();
      expect((await next.answer).status).toBe(200);
    } finally {
      for (const s of stalled) s.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('when a sender is slow but keeps sending, then it keeps its place', async () => {
    const { handler, held } = heldHandler();
    const { app } = buildApp({
      errorFormatter: plainFormatter,
      bodyLimit: 1024 * 1024,
      largeBodies: { above: 1024, concurrent: 1, stallMs: 300 },
      routes: (a) => a.post('/upload', handler),
    });
    const { server, port } = await serve(app);
    const slow = stalledPost(port);
    try {
      // Three times stallMs, a byte every 100 ms.
      for (let i = 0; i < 9; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        slow.write(' ');
      }
      slow.end('1}');
      await until(() => held.length === 1);
      (held[0] as () => void)();
      expect(await slow.answer).toMatchObject({ status: 200 });
    } finally {
      slow.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
