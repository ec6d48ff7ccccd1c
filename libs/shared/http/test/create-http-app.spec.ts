import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { createHttpApp, type ErrorFormatter } from '../src';
import { AppError, serviceUnavailable } from '@nhp/shared-errors';
import { at, buildApp, captureLogs, plainFormatter, problemJsonFormatter, settle } from './support';

const formats: Array<[string, ErrorFormatter]> = [
  ['plain JSON', plainFormatter],
  ['problem details', problemJsonFormatter],
];

function echoApp(errorFormatter: ErrorFormatter = problemJsonFormatter) {
  return buildApp({
    errorFormatter,
    bodyLimit: '1kb',
    routes: (app) => {
      app.post('/echo', (req, res) => {
        res.json({ body: req.body as unknown });
      });
      app.delete('/echo', (_req, res) => {
        res.status(204).end();
      });
    },
  });
}

describe('request id', () => {
  it('when the caller sends a sane X-Request-Id, then it is echoed and used on the request log line', async () => {
    const { app, logs } = echoApp();
    const res = await request(app).post('/echo').set('X-Request-Id', 'gw-1234.abc:def_9').send({});
    expect(res.headers['x-request-id']).toBe('gw-1234.abc:def_9');
    await settle();
    const line = logs.lines().find((l) => l['msg'] === 'request completed');
    expect(at(line, 'req.id')).toBe('gw-1234.abc:def_9');
  });

  it('when the caller sends none, then a UUID-shaped id is generated and echoed, a new one each time', async () => {
    const { app } = echoApp();
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await request(app).post('/echo').send({});
      expect(res.headers['x-request-id']).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      ids.add(res.headers['x-request-id'] as string);
    }
    expect(ids.size).toBe(3);
  });

  it.each([
    ['too long', 'a'.repeat(129)],
    ['with spaces', 'id with spaces'],
    ['with markup', '<script>'],
  ])(
    'when the incoming id is %s, then it is replaced by a generated one',
    async (_name, incoming) => {
      const { app } = echoApp();
      const res = await request(app).post('/echo').set('X-Request-Id', incoming).send({});
      expect(res.headers['x-request-id']).not.toBe(incoming);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('when an id is exactly 128 characters, then it is honoured', async () => {
    const { app } = echoApp();
    const id = 'a'.repeat(128);
    expect(
      (await request(app).post('/echo').set('X-Request-Id', id).send({})).headers['x-request-id'],
    ).toBe(id);
  });
});

describe('body parsing', () => {
  it.each([
    'application/json',
    'application/json-patch+json',
    'text/json',
    'application/merge-patch+json',
  ])('when the body is %s, then it is parsed as JSON', async (type) => {
    const { app } = echoApp();
    const res = await request(app)
      .post('/echo')
      .set('Content-Type', type)
      .send('[{"op":"add","path":"/a","value":1}]');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ body: [{ op: 'add', path: '/a', value: 1 }] });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])(
    'when a POST body is %s, then the answer is 415 and the route never runs',
    async (type) => {
      const { app } = echoApp();
      const res = await request(app).post('/echo').set('Content-Type', type).send('a=1');
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    },
  );

  it('when a DELETE carries a non-JSON body, then the answer is 415; without a body it goes through', async () => {
    const { app } = echoApp();
    expect(
      (await request(app).delete('/echo').set('Content-Type', 'text/plain').send('x')).status,
    ).toBe(415);
    expect((await request(app).delete('/echo')).status).toBe(204);
  });

  it('when a POST has a body but no Content-Type, then the answer is 415', async () => {
    const { app } = echoApp();
    const res = await request(app)
      .post('/echo')
      .set('Content-Length', '3')
      .send(Buffer.from('abc'));
    expect(res.status).toBe(415);
  });

  it('when a POST has no body at all (empty chunked, as Node clients send it), then the route runs', async () => {
    const { app } = echoApp();
    const res = await request(app).post('/echo');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
  });

  it('when a POST says Content-Length: 0, then the route runs', async () => {
    const { app } = echoApp();
    expect((await request(app).post('/echo').set('Content-Length', '0')).status).toBe(200);
  });

  it('when the JSON body is larger than the limit, then the answer is 413', async () => {
    const { app } = echoApp();
    const res = await request(app)
      .post('/echo')
      .send({ text: 'x'.repeat(2000) });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      detail: 'Request body is larger than 1024 bytes',
    });
  });

  it('when the JSON is malformed, then problem details say 400 without quoting the body', async () => {
    const { app } = echoApp(problemJsonFormatter);
    const res = await request(app)
      .post('/echo?x=1')
      .set('Content-Type', 'application/json')
      .send('{"fnr": "0101701234');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'Request body is not valid JSON',
      instance: '/echo',
      code: 'MALFORMED_JSON',
    });
  });

  it('when the JSON is malformed, then a JSON error body says 400 validation', async () => {
    const { app } = echoApp(plainFormatter);
    const res = await request(app)
      .post('/echo')
      .set('Content-Type', 'application/json')
      .send('{not json');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      code: 'MALFORMED_JSON',
      message: 'Request body is not valid JSON',
      category: 'validation',
    });
  });
});

/** Sends the bytes as they are (superagent would serialize a Buffer under a JSON type as JSON). */
function sendBytes(req: request.Test, bytes: Buffer | undefined): request.Test {
  const body = bytes as unknown as string;
  return req.serialize(() => body).send(body);
}

/** A route that answers, and records that it ran. */
const answeringRoute = () =>
  jest.fn((_req: express.Request, res: express.Response) => res.json({}));

describe('content encoding', () => {
  const compress: Record<string, (input: Buffer) => Buffer> = {
    gzip: (input) => gzipSync(input),
    br: (input) => brotliCompressSync(input),
    deflate: (input) => deflateSync(input),
  };
  const json = Buffer.from(JSON.stringify({ navn: 'Ærlig Øyvind', n: 1 }));

  it.each(Object.keys(compress))(
    'when a JSON body is really %s-compressed, then it is inflated and the route gets it',
    async (encoding) => {
      const { app } = echoApp();
      const res = await sendBytes(
        request(app)
          .post('/echo')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding),
        compress[encoding]?.(json),
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ body: { navn: 'Ærlig Øyvind', n: 1 } });
    },
  );

  it.each(
    formats.flatMap(([name, formatter]) =>
      ['gzip', 'br', 'deflate', 'GZIP'].map((encoding) => [encoding, name, formatter] as const),
    ),
  )(
    'when a body says Content-Encoding: %s but is not, then the %s answer is 400, not 500, and the route never runs',
    async (encoding, _name, formatter) => {
      const route = answeringRoute();
      const { app, logs } = buildApp({
        errorFormatter: formatter,
        routes: (a) => a.post('/echo', route),
      });
      const res = await sendBytes(
        request(app)
          .post('/echo')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .set('X-Request-Id', 'enc-1'),
        json,
      );
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'MALFORMED_CONTENT_ENCODING' });
      expect(res.headers['x-request-id']).toBe('enc-1');
      expect(route).not.toHaveBeenCalled();
      await settle();
      expect(logs.lines().find((l) => l['level'] === 50)).toBeUndefined();
      expect(logs.lines().find((l) => l['msg'] === 'request completed')).toMatchObject({
        level: 40,
        errorCode: 'MALFORMED_CONTENT_ENCODING',
      });
    },
  );

  it('when a gzip body is cut short, then the answer is 400', async () => {
    const { app } = echoApp();
    const whole = gzipSync(json);
    const res = await sendBytes(
      request(app)
        .post('/echo')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip'),
      whole.subarray(0, whole.length - 6),
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MALFORMED_CONTENT_ENCODING' });
  });

  it('when a body without Content-Type claims gzip but is not, then the answer is 400, not 500', async () => {
    const { app } = echoApp();
    const res = await request(app)
      .post('/echo')
      .set('Content-Encoding', 'gzip')
      .set('Content-Length', '3')
      .send(Buffer.from('abc'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MALFORMED_CONTENT_ENCODING' });
  });

  it.each(formats)(
    'when the encoding is one the server does not decode (compress), then the %s answer is 415',
    async (_name, formatter) => {
      const { app } = echoApp(formatter);
      for (const encoding of ['compress', 'gzip, br']) {
        const res = await sendBytes(
          request(app)
            .post('/echo')
            .set('Content-Type', 'application/json')
            .set('Content-Encoding', encoding),
          json,
        );
        expect(res.status).toBe(415);
        expect(res.body).toMatchObject({ code: 'UNSUPPORTED_CONTENT_ENCODING' });
      }
    },
  );

  it('when a compressed body inflates past the limit, then the answer is 413', async () => {
    const { app } = echoApp();
    const res = await sendBytes(
      request(app)
        .post('/echo')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip'),
      gzipSync(Buffer.from(JSON.stringify({ text: 'x'.repeat(100_000) }))),
    );
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('unpaired surrogates in JSON bodies', () => {
  it.each([
    ['a value', '{"text":"a\\ud800b"}'],
    ['a low surrogate alone', '{"text":"\\udc00"}'],
    ['a key', '{"\\ud800":1}'],
    ['a nested array', '{"a":[{"b":["ok","\\uDBFF"]}]}'],
    ['a top-level string', '"\\ud800"'],
  ])('when %s holds one, then the answer is 400 and the route never runs', async (_what, body) => {
    const route = answeringRoute();
    const { app } = buildApp({
      errorFormatter: plainFormatter,
      routes: (a) => a.post('/echo', route),
    });
    const res = await request(app).post('/echo').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MALFORMED_JSON', category: 'validation' });
    expect(route).not.toHaveBeenCalled();
  });

  it('when a string holds a surrogate pair (an emoji) or an escaped backslash before u, then it is accepted as sent', async () => {
    const { app } = echoApp();
    const res = await request(app)
      .post('/echo')
      .set('Content-Type', 'application/json')
      .send('{"text":"\\ud83d\\ude00","path":"C:\\\\ud800"}');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ body: { text: '\u{1F600}', path: 'C:\\ud800' } });
  });

  it('when the body nests deeper than a recursive walk could go, then it is still checked (400, not 500)', async () => {
    const { app } = buildApp({
      errorFormatter: plainFormatter,
      bodyLimit: '1mb',
      routes: (a) => a.post('/echo', (_req, res) => res.json({ ok: true })),
    });
    const depth = 200_000;
    const send = (inner: string) =>
      request(app)
        .post('/echo')
        .set('Content-Type', 'application/json')
        .send(`${'['.repeat(depth)}${inner}${']'.repeat(depth)}`);
    expect((await send('"\\ud800"')).status).toBe(400);
    expect((await send('"ok"')).status).toBe(200);
  });
});

describe('404 and 405', () => {
  function routedApp(errorFormatter: ErrorFormatter) {
    const parts = express.Router();
    parts.get('/:partKode', (req, res) => {
      res.json({ partKode: req.params['partKode'] });
    });
    parts.put('/:partKode', (_req, res) => {
      res.status(204).end();
    });
    return buildApp({
      errorFormatter,
      routes: (app) => {
        app
          .route('/part/v1')
          .post((_req, res) => res.status(201).json({}))
          .put((_req, res) => res.status(204).end());
        app.use('/parts', parts);
      },
    });
  }

  it.each(formats)(
    'when no route has the path, then the answer is 404 in the %s body',
    async (_name, formatter) => {
      const { app } = routedApp(formatter);
      const res = await request(app).get('/nope');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
      expect(res.headers['allow']).toBeUndefined();
    },
  );

  it('when the path exists for other methods, then the answer is 405 with Allow (JSON body)', async () => {
    const { app } = routedApp(plainFormatter);
    const res = await request(app).delete('/part/v1');
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('POST, PUT');
    expect(res.body).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      message: 'DELETE is not allowed on /part/v1; use POST, PUT',
      category: 'method',
    });
  });

  it('when a mounted router has the path with a parameter, then 405 lists its methods including HEAD', async () => {
    const { app } = routedApp(problemJsonFormatter);
    const res = await request(app).post('/parts/HN');
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('GET, HEAD, PUT');
    expect(res.body).toMatchObject({
      status: 405,
      title: 'Method Not Allowed',
      code: 'METHOD_NOT_ALLOWED',
    });
    expect((await request(app).get('/parts/HN')).body).toEqual({ partKode: 'HN' });
  });

  it('when the path is deeper than any route, then the answer is 404, not 405', async () => {
    const { app } = routedApp(problemJsonFormatter);
    expect((await request(app).post('/parts/HN/extra')).status).toBe(404);
    expect((await request(app).post('/part/v1/extra')).status).toBe(404);
  });

  it('when OPTIONS asks about an existing path, then it answers 204 with Allow', async () => {
    const { app } = routedApp(problemJsonFormatter);
    const res = await request(app).options('/part/v1');
    expect(res.status).toBe(204);
    expect(res.headers['allow']).toBe('POST, PUT');
  });
});

describe('errors', () => {
  function failingApp(errorFormatter: ErrorFormatter) {
    return buildApp({
      errorFormatter,
      routes: (app) => {
        app.get('/boom', () => {
          throw new Error('connection string mongodb://admin:hunter2@db is wrong');
        });
        app.get('/async-boom', async () => {
          await Promise.resolve();
          throw new TypeError('cannot read properties of undefined (reading innbyggerFnr)');
        });
        app.get('/down', () => {
          throw serviceUnavailable(
            'DATABASE_UNAVAILABLE',
            'MongoDB at db:27017 refused the connection',
          );
        });
        app.get('/conflict', () => {
          throw new AppError({
            code: 'PART_EXISTS',
            status: 409,
            message: 'Part HN exists',
          });
        });
        app.get('/items/:id', (req, res) => {
          res.json({ id: req.params['id'] });
        });
      },
    });
  }

  it.each(formats)(
    'when a handler throws an unknown error, then the %s body is a 500 without internal detail',
    async (_name, formatter) => {
      const { app } = failingApp(formatter);
      for (const path of ['/boom', '/async-boom']) {
        const res = await request(app).get(path);
        expect(res.status).toBe(500);
        expect(res.body).toMatchObject({ code: 'INTERNAL_ERROR' });
        expect(res.text).not.toMatch(/hunter2|mongodb|innbyggerFnr|TypeError|at /);
      }
    },
  );

  it('when a handler throws an unknown error, then it is logged at error level with its stack and request id', async () => {
    const { app, logs } = failingApp(problemJsonFormatter);
    const res = await request(app).get('/boom').set('X-Request-Id', 'req-42');
    await settle();
    const line = logs.lines().find((l) => l['msg'] === 'unexpected error');
    expect(line).toBeDefined();
    expect(line?.['level']).toBe(50);
    expect(at(line, 'err.stack')).toContain('Error: connection string');
    expect(at(line, 'err.stack')).toContain('create-http-app.spec.ts');
    expect(at(line, 'req.id')).toBe('req-42');
    expect(res.headers['x-request-id']).toBe('req-42');
  });

  it('when a handler throws an AppError its thrower marks non-operational, then it is logged at error with its stack whatever its status', async () => {
    const { app, logs } = buildApp({
      errorFormatter: plainFormatter,
      routes: (a) => {
        a.get('/bug', () => {
          throw new AppError({
            code: 'STATE_BROKEN',
            status: 409,
            message: 'm',
            operational: false,
          });
        });
        a.get('/rule', () => {
          throw new AppError({ code: 'PART_EXISTS', status: 409, message: 'm' });
        });
      },
    });
    expect((await request(app).get('/bug').set('X-Request-Id', 'bug-1')).status).toBe(409);
    expect((await request(app).get('/rule')).status).toBe(409);
    await settle();
    const failed = logs.lines().filter((l) => l['msg'] === 'request failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 50, operational: false, req: { id: 'bug-1' } });
    expect(at(failed[0], 'err.stack')).toContain('create-http-app.spec.ts');
  });

  it('when an AppError is a 5xx, then the client gets its code but not its message', async () => {
    const { app } = failingApp(plainFormatter);
    const res = await request(app).get('/down');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      code: 'DATABASE_UNAVAILABLE',
      message: 'An unexpected error occurred',
      category: 'unavailable',
    });
  });

  it('when a path parameter is malformed percent-encoding, then the answer is 400, not 500', async () => {
    const { app } = failingApp(problemJsonFormatter);
    const res = await request(app).get('/items/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MALFORMED_PATH' });
  });

  it('when a request ends in an error, then its request log line names the error code', async () => {
    const { app, logs } = failingApp(problemJsonFormatter);
    await request(app).get('/conflict');
    await settle();
    const line = logs.lines().find((l) => l['msg'] === 'request completed');
    expect(line).toMatchObject({ level: 40, errorCode: 'PART_EXISTS' });
  });
});

describe('request logging', () => {
  it('when the logger is at warn, then a successful request writes no line and a failed one writes its request line with the request', async () => {
    const logs = captureLogs('warn');
    const app = createHttpApp({
      logger: logs.logger,
      errorFormatter: problemJsonFormatter,
      routes: (app) => app.get('/ok', (_req, res) => res.json({})),
    });
    await request(app).get('/ok?fnr=01017012345');
    await settle();
    expect(logs.lines()).toEqual([]);
    await request(app).get('/missing?fnr=01017012345');
    await settle();
    const line = logs.lines().find((l) => l['msg'] === 'request completed');
    expect(line).toMatchObject({ level: 40, errorCode: 'NOT_FOUND', res: { statusCode: 404 } });
    expect(at(line, 'req.url')).toBe('/missing');
    expect(at(line, 'req.method')).toBe('GET');
    expect(logs.text()).not.toMatch(/01017012345/);
  });

  it('when a route logs through req.log or replaces it with a child, then its lines carry the request and the request line keeps its own bindings', async () => {
    const { app, logs } = buildApp({
      errorFormatter: problemJsonFormatter,
      routes: (app) =>
        app.get('/work', (req, res) => {
          req.log.info({ step: 1 }, 'working');
          req.log = req.log.child({ client: 'c-1' });
          req.log.info({ step: 2 }, 'still working');
          res.json({});
        }),
    });
    await request(app).get('/work').set('X-Request-Id', 'rid-1');
    await settle();
    const lines = logs.lines();
    const working = lines.find((l) => l['msg'] === 'working');
    const still = lines.find((l) => l['msg'] === 'still working');
    const done = lines.find((l) => l['msg'] === 'request completed');
    expect(at(working, 'req.id')).toBe('rid-1');
    expect(still).toMatchObject({ client: 'c-1', step: 2 });
    expect(at(still, 'req.id')).toBe('rid-1');
    expect(at(done, 'req.id')).toBe('rid-1');
    expect(done?.['client']).toBeUndefined();
  });

  it('when a request carries credentials and a query string, then the log line has neither', async () => {
    const { app, logs } = buildApp({
      errorFormatter: problemJsonFormatter,
      routes: (app) => app.get('/search', (_req, res) => res.json({})),
    });
    await request(app)
      .get('/search?fnr=01017012345&partKode=HN')
      .set('Authorization', 'Bearer secret-token')
      .set('X-API-KEY', 'local-dev-key')
      .set('Cookie', 'session=abc');
    await settle();
    const text = logs.text();
    expect(text).not.toMatch(/secret-token|local-dev-key|session=abc|01017012345/);
    const line = logs.lines().find((l) => l['msg'] === 'request completed');
    expect(at(line, 'req.url')).toBe('/search');
    expect(at(line, 'req.query.partKode')).toBe('HN');
    expect(at(line, 'req.headers.authorization')).toBeUndefined();
    expect(line).toMatchObject({ level: 30, responseTime: expect.any(Number) });
  });

  it('when a request carries an unlisted token header and padded headers, then neither reaches the log and the line stays short', async () => {
    const { app, logs } = buildApp({
      errorFormatter: problemJsonFormatter,
      routes: (app) => app.get('/search', (_req, res) => res.json({})),
    });
    const padding = 'p'.repeat(8000);
    await request(app)
      .get(`/search?q=${'q'.repeat(3000)}`)
      .set('X-Auth-Token', 'tok-3f9a1c77e2')
      .set('X-Padding', padding)
      .set('User-Agent', `curl/8 ${'u'.repeat(3000)}`)
      .set('X-Request-Id', 'req-7');
    await settle();
    const text = logs.text();
    expect(text).not.toContain('tok-3f9a1c77e2');
    expect(text).not.toContain(padding.slice(0, 300));
    const line = logs.lines().find((l) => l['msg'] === 'request completed');
    expect(Object.keys(at(line, 'req.headers') as object).sort()).toEqual([
      'accept-encoding',
      'host',
      'user-agent',
      'x-request-id',
    ]);
    expect(at(line, 'req.headers.x-request-id')).toBe('req-7');
    expect(String(at(line, 'req.headers.user-agent'))).toMatch(/^curl\/8 u+…\[3007 chars\]$/);
    expect(String(at(line, 'req.query.q')).length).toBeLessThan(300);
    expect(JSON.stringify(line).length).toBeLessThan(3000);
  });

  it('when a health probe is answered, then its log line is at debug level', async () => {
    const health = express.Router();
    health.get('/health', (_req, res) => res.status(503).end());
    const { app, logs } = buildApp({
      errorFormatter: problemJsonFormatter,
      health,
      routes: () => undefined,
    });
    expect((await request(app).get('/health')).status).toBe(503);
    await settle();
    expect(logs.lines().find((l) => at(l, 'req.url') === '/health')?.['level']).toBe(20);
  });
});

describe('app settings', () => {
  it('when a response is sent, then there is no X-Powered-By header', async () => {
    const { app } = echoApp();
    expect((await request(app).post('/echo').send({})).headers['x-powered-by']).toBeUndefined();
  });

  it('when trust proxy is left off, then X-Forwarded-For does not change req.ip', async () => {
    const { app } = buildApp({
      errorFormatter: problemJsonFormatter,
      routes: (app) => app.get('/ip', (req, res) => res.json({ ip: req.ip })),
    });
    const res = await request(app).get('/ip').set('X-Forwarded-For', '203.0.113.9');
    expect(res.body.ip).not.toBe('203.0.113.9');
  });
});
