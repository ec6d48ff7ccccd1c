import http, { type IncomingMessage, type Server } from 'node:http';
import { closeServer, listen, serverPort } from '../src';
import { buildApp, problemJsonFormatter } from './support';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function get(
  port: number,
  path: string,
  agent?: http.Agent,
): Promise<{ res: IncomingMessage; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ res, body }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** An app whose /slow handler waits until the test releases it, and tells the test it started. */
function slowApp() {
  const started = deferred();
  const release = deferred();
  const { app } = buildApp({
    errorFormatter: problemJsonFormatter,
    routes: (app) => {
      app.get('/slow', async (_req, res) => {
        started.resolve();
        await release.promise;
        res.json({ done: true });
      });
      app.get('/fast', (_req, res) => res.json({ ok: true }));
      app.get('/never', () => started.resolve());
    },
  });
  return { app, started, release };
}

describe('listen and closeServer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server?.listening) await closeServer(server, 0);
  });

  it('when the server closes during a slow request, then that request still completes and new connections are refused', async () => {
    const { app, started, release } = slowApp();
    server = await listen(app, 0, '127.0.0.1');
    const port = serverPort(server);

    const inFlight = get(port, '/slow');
    await started.promise;
    const closed = closeServer(server, 60_000);

    await expect(get(port, '/fast')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    release.resolve();
    const { res, body } = await inFlight;
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(body)).toEqual({ done: true });
    expect(res.headers['connection']).toBe('close');
    await closed;
    expect(server.listening).toBe(false);
  });

  it('when a keep-alive client holds an idle connection, then closing does not wait for the timeout', async () => {
    const { app } = slowApp();
    server = await listen(app, 0, '127.0.0.1');
    const agent = new http.Agent({ keepAlive: true });
    try {
      const { res } = await get(serverPort(server), '/fast', agent);
      expect(res.headers['connection']).toBe('keep-alive');
      // With a 10-minute timeout, only closing the idle socket lets this resolve within the test.
      await closeServer(server, 600_000);
      expect(server.listening).toBe(false);
    } finally {
      agent.destroy();
    }
  });

  /**
   * Starts /slow on a keep-alive connection, closes the server meanwhile, and expects that response
   * to end its connection and the close to complete (without waiting for keep-alive timeouts).
   */
  async function expectInFlightKeepAliveEndsAsClosing(
    before: (port: number, agent: http.Agent) => Promise<void> = async () => undefined,
  ) {
    const { app, started, release } = slowApp();
    const listening = await listen(app, 0, '127.0.0.1');
    server = listening;
    // Node would otherwise keep the socket open for this long after the response.
    listening.keepAliveTimeout = 600_000;
    const agent = new http.Agent({ keepAlive: true });
    try {
      await before(serverPort(listening), agent);
      const inFlight = get(serverPort(listening), '/slow', agent);
      await started.promise;
      const closed = closeServer(listening, 600_000);
      release.resolve();
      expect((await inFlight).res.headers['connection']).toBe('close');
      await closed;
      expect(listening.listening).toBe(false);
    } finally {
      agent.destroy();
    }
  }

  it('when a keep-alive request is in flight as closing starts, then its connection ends with the response', async () => {
    await expectInFlightKeepAliveEndsAsClosing();
  });

  it('when many connections came and went before, then a keep-alive request in flight still ends its connection as closing starts', async () => {
    await expectInFlightKeepAliveEndsAsClosing(async (port, agent) => {
      // More closed connections than the tracker keeps before pruning them.
      for (let i = 0; i < 1100; i++) await get(port, '/fast');
      await get(port, '/fast', agent); // a keep-alive connection, idle until /slow reuses it
    });
  });

  it('when a request outlives the timeout, then its connection is destroyed and the close completes', async () => {
    const { app, started } = slowApp();
    server = await listen(app, 0, '127.0.0.1');
    const stuck = get(serverPort(server), '/never');
    await started.promise;
    await closeServer(server, 50);
    await expect(stuck).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('when the port is taken, then listen rejects', async () => {
    const { app } = slowApp();
    server = await listen(app, 0, '127.0.0.1');
    await expect(listen(app, serverPort(server), '127.0.0.1')).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
  });

  it('when the server is not listening, then closeServer resolves at once', async () => {
    const { app } = slowApp();
    const idle = http.createServer(app);
    await expect(closeServer(idle, 10)).resolves.toBeUndefined();
  });

  it('when a client streams a chunked body without Content-Type, then a non-empty one gets 415', async () => {
    const { app } = buildApp({
      errorFormatter: problemJsonFormatter,
      routes: (app) => app.post('/echo', (req, res) => res.json({ body: req.body as unknown })),
    });
    server = await listen(app, 0, '127.0.0.1');
    const port = serverPort(server);
    const post = (chunk: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port, path: '/echo', method: 'POST' },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        if (chunk) req.write(chunk);
        req.end();
      });
    expect(await post('hello')).toBe(415);
    expect(await post('')).toBe(200);
  });
});
