import type { RequestListener, Server } from 'node:http';
import net from 'node:net';
import type { ErrorFormatter } from '../src';
import { closeServer, listen, serverPort } from '../src';
import { at, buildApp, plainFormatter, problemJsonFormatter, settle } from './support';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseRaw(raw: string): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = raw.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(split + 4) };
}

/**
 * Sends `head` on a raw connection, then `trickle` one byte at a time (a byte every 20 ms) until
 * the server answers or closes; resolves with everything the server sent.
 */
function rawExchange(port: number, head: string, trickle = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      clearInterval(timer);
    });
    socket.on('error', (err) => (received ? resolve(received) : reject(err)));
    socket.on('close', () => {
      clearInterval(timer);
      resolve(received);
    });
    socket.write(head);
    let sent = 0;
    if (trickle) {
      timer = setInterval(() => {
        if (received || socket.destroyed) return clearInterval(timer);
        socket.write(trickle.charAt(sent % trickle.length));
        sent += 1;
      }, 20);
    }
  });
}

const cases: Array<[string, ErrorFormatter, string]> = [
  ['a problem+json app', problemJsonFormatter, 'application/problem+json'],
  ['a plain JSON app', plainFormatter, 'application/json'],
];

describe.each(cases)('errors raised by the HTTP parser, in %s', (_name, formatter, contentType) => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server?.listening) await closeServer(server, 0);
  });

  async function start(limits: Parameters<typeof listen>[3] = {}) {
    const built = buildApp({
      errorFormatter: formatter,
      routes: (app) => {
        app.post('/echo', (req, res) => res.json({ body: req.body as unknown }));
        app.get('/ok', (_req, res) => res.json({ ok: true }));
      },
    });
    server = await listen(built.app, 0, '127.0.0.1', limits);
    return { port: serverPort(server), logs: built.logs };
  }

  it('when the header block is larger than Node accepts, then the answer is 431 in the app error body', async () => {
    const { port, logs } = await start();
    const raw = await rawExchange(
      port,
      `GET /ok?x=1 HTTP/1.1\r\nHost: localhost\r\nX-Auth-Token: tok-77aa\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`,
    );
    const res = parseRaw(raw);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe(contentType);
    expect(res.headers['connection']).toBe('close');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'HEADERS_TOO_LARGE' });
    if (contentType === 'application/problem+json') {
      expect(body).toMatchObject({ status: 431, instance: '/ok' });
    }
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await settle();
    const line = logs.lines().find((l) => l['msg'] === 'request refused by the HTTP parser');
    expect(line).toMatchObject({ level: 40, errorCode: 'HEADERS_TOO_LARGE', statusCode: 431 });
    expect(logs.text()).not.toContain('tok-77aa');
    expect(logs.text()).not.toContain('ppppp');
  });

  it('when the request is not valid HTTP, then the answer is 400 in the app error body', async () => {
    const { port } = await start();
    const res = parseRaw(
      await rawExchange(port, 'GET /ok HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n'),
    );
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe(contentType);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'MALFORMED_REQUEST' });
  });

  it('when a request line is garbage, then the answer is still 400 in the app error body', async () => {
    const { port } = await start();
    const res = parseRaw(await rawExchange(port, '\u0001\u0002 nonsense\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'MALFORMED_REQUEST' });
  });

  it('when a POST body trickles in past the request timeout, then the answer is 408 in the app error body', async () => {
    const { port, logs } = await start({
      HTTP_HEADERS_TIMEOUT_MS: 200,
      HTTP_REQUEST_TIMEOUT_MS: 200,
    });
    const raw = await rawExchange(
      port,
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100000\r\nX-Request-Id: slow-1\r\n\r\n{"a":"',
      'x',
    );
    const res = parseRaw(raw);
    expect(res.status).toBe(408);
    expect(res.headers['content-type']).toContain(contentType);
    expect(res.headers['x-request-id']).toBe('slow-1');
    expect(JSON.parse(res.body)).toMatchObject({ code: 'REQUEST_TIMEOUT' });
    await settle();
    const line = logs.lines().find((l) => at(l, 'req.id') === 'slow-1' && at(l, 'res'));
    expect(line).toMatchObject({ errorCode: 'REQUEST_TIMEOUT' });
    expect(at(line, 'res.statusCode')).toBe(408);
    expect(logs.lines().filter((l) => Number(l['level']) >= 50)).toEqual([]);
  });

  it('when headers trickle in past the headers timeout, then the answer is 408 in the app error body', async () => {
    const { port } = await start({ HTTP_HEADERS_TIMEOUT_MS: 200, HTTP_REQUEST_TIMEOUT_MS: 200 });
    const res = parseRaw(
      await rawExchange(port, 'GET /ok HTTP/1.1\r\nHost: localhost\r\nX-Slow: ', 'abcdef'),
    );
    expect(res.status).toBe(408);
    expect(res.headers['content-type']).toBe(contentType);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'REQUEST_TIMEOUT' });
  });

  it('when a request carries an Expect the server cannot meet, then the answer is 417 in the app error body with the request id', async () => {
    const { port, logs } = await start();
    const res = parseRaw(
      await rawExchange(
        port,
        'POST /echo HTTP/1.1\r\nHost: localhost\r\nExpect: something\r\nX-Request-Id: exp-1\r\n' +
          'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      ),
    );
    expect(res.status).toBe(417);
    expect(res.headers['content-type']).toContain(contentType);
    expect(res.headers['x-request-id']).toBe('exp-1');
    expect(res.headers['connection']).toBe('close');
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'EXPECTATION_FAILED' });
    if (contentType === 'application/problem+json') {
      expect(body).toMatchObject({ status: 417, instance: '/echo' });
    }
    await settle();
    const line = logs.lines().find((l) => at(l, 'req.id') === 'exp-1' && at(l, 'res'));
    expect(line).toMatchObject({ level: 40, errorCode: 'EXPECTATION_FAILED' });
  });

  it('when a request says Expect: 100-continue, then Node sends 100 Continue and the route answers', async () => {
    const { port } = await start();
    const raw = await rawExchange(
      port,
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nConnection: close\r\n' +
        'Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}',
    );
    expect(raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    expect(raw).toContain('{"body":{"a":1}}');
  });

  it('when an HTTP/1.1 request has no Host, then the answer is 400 in the app error body with a request id', async () => {
    const { port, logs } = await start();
    const res = parseRaw(await rawExchange(port, 'GET /ok?x=1 HTTP/1.1\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toContain(contentType);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['connection']).toBe('close');
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'MISSING_HOST' });
    if (contentType === 'application/problem+json') {
      expect(body).toMatchObject({ status: 400, instance: '/ok' });
    }
    await settle();
    const line = logs.lines().find((l) => at(l, 'res.statusCode') === 400);
    expect(line).toMatchObject({ level: 40, errorCode: 'MISSING_HOST' });
  });

  it('when an HTTP/1.0 request has no Host, then it is served (HTTP/1.0 does not require one)', async () => {
    const { port } = await start();
    const res = parseRaw(await rawExchange(port, 'GET /ok HTTP/1.0\r\n\r\n'));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true });
  });
});

describe('listen limits', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server?.listening) await closeServer(server, 0);
  });

  function okApp() {
    return buildApp({
      errorFormatter: plainFormatter,
      routes: (app) => app.get('/ok', (_req, res) => res.json({ ok: true })),
    }).app;
  }

  it('when limits are given, then the server applies them; when not, then the production defaults apply', async () => {
    server = await listen(okApp(), 0, '127.0.0.1', {
      HTTP_HEADERS_TIMEOUT_MS: 4000,
      HTTP_REQUEST_TIMEOUT_MS: 8000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 3000,
      HTTP_MAX_CONNECTIONS: 7,
    });
    expect(server).toMatchObject({
      headersTimeout: 4000,
      requestTimeout: 8000,
      keepAliveTimeout: 3000,
      maxConnections: 7,
    });
    await closeServer(server, 0);
    server = await listen(okApp(), 0, '127.0.0.1');
    expect(server).toMatchObject({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 65_000,
      maxConnections: 10_000,
    });
  });

  it('when the headers timeout exceeds the request timeout, then listen refuses with both names', async () => {
    await expect(
      listen(okApp(), 0, '127.0.0.1', {
        HTTP_HEADERS_TIMEOUT_MS: 5000,
        HTTP_REQUEST_TIMEOUT_MS: 10,
      }),
    ).rejects.toThrow(
      'HTTP_HEADERS_TIMEOUT_MS (5000) must not exceed HTTP_REQUEST_TIMEOUT_MS (10)',
    );
  });

  it('when a listener wraps the app and names it in errorsFrom, then parser errors still get the app error body', async () => {
    const { app } = buildApp({ errorFormatter: plainFormatter, routes: () => undefined });
    const wrapper: RequestListener = (req, res) => app(req, res);
    const oversized = `GET / HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`;

    server = await listen(wrapper, 0, '127.0.0.1', { errorsFrom: app });
    const named = parseRaw(await rawExchange(serverPort(server), oversized));
    expect(named.headers['content-type']).toBe('application/json');
    expect(JSON.parse(named.body)).toMatchObject({ code: 'HEADERS_TOO_LARGE' });
    await closeServer(server, 0);

    server = await listen(wrapper, 0, '127.0.0.1');
    const unnamed = parseRaw(await rawExchange(serverPort(server), oversized));
    expect(unnamed.status).toBe(431);
    expect(unnamed.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('when a listener wraps the app, then a Host-less request gets the app error body through errorsFrom, and text without it', async () => {
    const { app } = buildApp({
      errorFormatter: plainFormatter,
      routes: (a) => a.get('/ok', (_req, res) => res.json({ ok: true })),
    });
    let wrapped = 0;
    const wrapper: RequestListener = (req, res) => {
      wrapped += 1;
      app(req, res);
    };
    const hostless = 'GET /ok HTTP/1.1\r\n\r\n';

    server = await listen(wrapper, 0, '127.0.0.1', { errorsFrom: app });
    const named = parseRaw(await rawExchange(serverPort(server), hostless));
    expect(named.status).toBe(400);
    expect(named.headers['content-type']).toContain('application/json');
    expect(JSON.parse(named.body)).toMatchObject({ code: 'MISSING_HOST' });
    await closeServer(server, 0);

    server = await listen(wrapper, 0, '127.0.0.1');
    const unnamed = parseRaw(await rawExchange(serverPort(server), hostless));
    expect(unnamed.status).toBe(400);
    expect(unnamed.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(unnamed.headers['connection']).toBe('close');
    // Refused before the listener: a wrapper (a fast path) never sees such a request.
    expect(wrapped).toBe(0);
  });

  it('when the connection cap is reached, then a further connection is dropped and the open one is still served', async () => {
    server = await listen(okApp(), 0, '127.0.0.1', { HTTP_MAX_CONNECTIONS: 1 });
    const port = serverPort(server);
    const accepted = new Promise((resolve) => server?.once('connection', resolve));
    const first = net.connect(port, '127.0.0.1');
    await accepted;
    const dropped = new Promise((resolve) => server?.once('drop', resolve));
    const second = await rawExchange(port, 'GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await dropped;
    expect(second).toBe('');
    const answer = new Promise<string>((resolve) => {
      let text = '';
      first.setEncoding('latin1');
      first.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('{"ok":true}')) resolve(text);
      });
    });
    first.write('GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(parseRaw(await answer).status).toBe(200);
    first.destroy();
  });
});
