/**
 * The app shell as clients meet it: content types, body limits, unknown paths and methods, the
 * debug header, request ids, path spelling and the gateway prefix, an unreachable database.
 */
import { createPrivacyAuth } from '@nhp/privacy-auth';
import { PARTS_COLLECTION } from '@nhp/privacy-data-access';
import { createHealth } from '@nhp/shared-health';
import { listen } from '@nhp/shared-http';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { startTestInfra } from '@nhp/shared-testing';
import { randomUUID } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { createApp, createPrivacyApp } from '../src/app';
import { createPrivacyContext } from '../src/context';
import { TEMPLATES, usePrivacyHarness } from './support/harness';
import { bodyRoutes, concrete } from './support/routes';

const h = usePrivacyHarness({ options: { basePath: '/personvern', allowDebug: true } });
const newPartKode = () => `h-${Math.random().toString(36).slice(2, 10)}`;
const errorBody = (code: string) => ({
  code,
  message: expect.any(String),
  errorCategory: 'ClientValidationError',
});

async function admin(): Promise<string> {
  return h.get().bearer(await h.get().adminToken());
}

describe('content types and bodies', () => {
  it.each([
    'application/json',
    'application/json-patch+json',
    'text/json',
    'application/vnd.nhn+json',
  ])('when the body comes as %s, then it is accepted', async (type) => {
    const partKode = newPartKode();
    const res = await request(h.get().app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .set('Content-Type', `${type}; charset=utf-8`)
      .send(JSON.stringify({ partKode }));
    expect(res.status).toBe(201);
    expect(await h.get().context.parts.find(partKode)).toBeDefined();
  });

  it('when the body is text/plain, then 415 EPVK-100415 with a request id, and nothing is written', async () => {
    const partKode = newPartKode();
    const res = await request(h.get().app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify({ partKode }));
    expect(res.status).toBe(415);
    expect(res.body).toEqual(errorBody('EPVK-100415'));
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(await h.get().count(PARTS_COLLECTION, { _id: partKode })).toBe(0);
  });

  it('when the JSON is malformed, then 400 EPVK-100400 without echoing the body', async () => {
    const res = await request(h.get().app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .set('Content-Type', 'application/json')
      .send('{"partKode": "secret-13116900216",');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody('EPVK-100400'));
    expect(res.body.message).not.toContain('13116900216');
  });

  it('when the body is a JSON array, then 400 EPVK-100400', async () => {
    const res = await request(h.get().app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .send([{ partKode: newPartKode() }]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-100400');
  });

  it('when a body is over 256 KiB, then 413 EPVK-100413', async () => {
    const res = await request(h.get().app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .send({ partKode: newPartKode(), beskrivelse: 'x'.repeat(300 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual(errorBody('EPVK-100413'));
  });

  it.each([
    '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2',
    '/Personverninnstillinger/SettInnbyggersPersonvernInnstilling/v2',
    '/personvern/Personverninnstillinger/SettInnbyggersPersonvernInnstilling/v2/',
  ])(
    'when a 1 MiB body goes to %s, then it is read (no 413) and judged by the contract',
    async (path) => {
      const res = await request(h.get().app)
        .post(path)
        .set('Authorization', await admin())
        .send({ signertBevisInnhold: 'A'.repeat(1024 * 1024) });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('EPVK-100400');
    },
  );

  it('when a body to the setting operation is over 6 MiB, then 413 EPVK-100413', async () => {
    const res = await request(h.get().app)
      .post('/personverninnstillinger/settinnbyggerspersonverninnstilling/v2')
      .set('Authorization', await admin())
      .send({ signertBevisInnhold: 'A'.repeat(6 * 1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('EPVK-100413');
  });
});

/** Sends bytes as they are (superagent would serialize a Buffer under a JSON type as JSON). */
function withBytes(req: request.Test, bytes: Buffer): request.Test {
  const body = bytes as unknown as string;
  return req.serialize(() => body).send(body);
}

describe('content encoding', () => {
  const COMPRESS = { gzip: gzipSync, br: brotliCompressSync, deflate: deflateSync };

  it('when any body route gets a body its Content-Encoding does not describe, then 400 EPVK-100400 with a request id, never 500', async () => {
    const routes = bodyRoutes(h.get().app);
    // Parties, definitions, settings, inclusions and the youth-app consent, each at the root and
    // under the base path: the sweep cannot quietly check nothing.
    expect(routes.length).toBeGreaterThanOrEqual(22);
    const token = h.get().bearer(await h.get().adminToken({ pid: '13116900216' }));
    const failures: string[] = [];
    for (const route of routes) {
      for (const encoding of Object.keys(COMPRESS)) {
        const method = route.method.toLowerCase() as 'post' | 'put' | 'patch' | 'delete';
        const res = await withBytes(
          request(h.get().app)
            [method](concrete(route.path))
            .set('Authorization', token)
            .set('Content-Type', 'application/json')
            .set('Content-Encoding', encoding)
            .set('X-Request-Id', 'enc-sweep'),
          Buffer.from(JSON.stringify({ partKode: 'x' })),
        );
        const ok =
          res.status === 400 &&
          res.body?.code === 'EPVK-100400' &&
          res.body?.errorCategory === 'ClientValidationError' &&
          res.headers['x-request-id'] === 'enc-sweep';
        if (!ok)
          failures.push(`${route.method} ${route.path} ${encoding}: ${res.status} ${res.text}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it.each(Object.entries(COMPRESS))(
    'when a body is really %s-compressed, then it is inflated and the operation runs',
    async (encoding, compress) => {
      const partKode = newPartKode();
      const res = await withBytes(
        request(h.get().app)
          .post('/part/v1')
          .set('Authorization', await admin())
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding),
        compress(Buffer.from(JSON.stringify({ partKode, navn: 'Ærlig Part' }))),
      );
      expect(res.status).toBe(201);
      expect(await h.get().context.parts.find(partKode)).toMatchObject({ navn: 'Ærlig Part' });
    },
  );

  it('when the encoding is one the service does not decode (compress), then 415 EPVK-100415 and nothing is written', async () => {
    const partKode = newPartKode();
    const res = await withBytes(
      request(h.get().app)
        .post('/part/v1')
        .set('Authorization', await admin())
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'compress'),
      Buffer.from(JSON.stringify({ partKode })),
    );
    expect(res.status).toBe(415);
    expect(res.body).toEqual(errorBody('EPVK-100415'));
    expect(await h.get().count(PARTS_COLLECTION, { _id: partKode })).toBe(0);
  });
});

describe('paths and methods', () => {
  it('when a path is unknown, then 404 in ErrorResponse with a request id', async () => {
    const res = await request(h.get().app)
      .get('/no/such/path')
      .set('Authorization', await admin());
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody('EPVK-100404'));
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('when a path exists for other methods, then 405 with Allow in ErrorResponse', async () => {
    const res = await request(h.get().app)
      .delete('/part/v1')
      .set('Authorization', await admin());
    expect(res.status).toBe(405);
    expect(res.body).toEqual(errorBody('EPVK-100405'));
    expect(res.headers['allow']).toContain('POST');
    expect(res.headers['allow']).toContain('PUT');
  });

  it('when a path is unknown and there is no token, then 401 (nothing is told without one)', async () => {
    const res = await request(h.get().app).get('/no/such/path');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('EPVK-100401');
  });

  it.each(['/PART/V1', '/Part/v1', '/personvern/Part/V1', '/PERSONVERN/part/v1'])(
    'when the path is spelled %s, then it is the same operation',
    async (path) => {
      const partKode = newPartKode();
      const res = await request(h.get().app)
        .post(path)
        .set('Authorization', await admin())
        .send({ partKode });
      expect(res.status).toBe(201);
      expect(await h.get().context.parts.find(partKode)).toBeDefined();
    },
  );

  it('when /health is asked under the base path, then it is not there (only at the root)', async () => {
    const res = await request(h.get().app)
      .get('/personvern/health')
      .set('Authorization', await admin());
    expect(res.status).toBe(404);
  });
});

describe('X-hn-isdebug', () => {
  it.each(['true', 'TRUE', 'False', 'false'])(
    'when it is %s, then the request is served',
    async (value) => {
      const partKode = newPartKode();
      const res = await request(h.get().app)
        .post('/part/v1')
        .set('Authorization', await admin())
        .set('X-hn-isdebug', value)
        .send({ partKode });
      expect(res.status).toBe(201);
    },
  );

  it.each(['yes', '1', '', 'true,false'])(
    'when it is "%s", then 400 EPVK-100400 naming the header, and nothing is written',
    async (value) => {
      const partKode = newPartKode();
      const res = await request(h.get().app)
        .post('/part/v1')
        .set('Authorization', await admin())
        .set('X-hn-isdebug', value)
        .send({ partKode });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('EPVK-100400');
      expect(res.body.message).toContain('X-hn-isdebug');
      expect(await h.get().count(PARTS_COLLECTION, { _id: partKode })).toBe(0);
    },
  );

  it('when it is true and debugging is allowed, then the message names the paths and the request id', async () => {
    const res = await request(h.get().app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .set('X-hn-isdebug', 'true')
      .set('X-Request-Id', 'dbg-1')
      .send({ partKode: 'ok', farge: 1, navn: 2 });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('paths: body.navn, body.farge');
    expect(res.body.message).toContain('requestId: dbg-1');
  });

  it('when it is absent, then the message carries no request id', async () => {
    const res = await request(h.get().app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .set('X-Request-Id', 'dbg-2')
      .send({ partKode: 'ok', farge: 1 });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('farge');
    expect(res.body.message).not.toContain('dbg-2');
  });

  it('when /health gets an invalid value, then it is ignored there', async () => {
    const res = await request(h.get().app).get('/health').set('X-hn-isdebug', 'maybe');
    expect(res.status).toBe(200);
  });
});

describe('when debugging is not allowed', () => {
  it('then X-hn-isdebug: true adds nothing to the message', async () => {
    const { context, issuer } = h.get();
    const quiet = createPrivacyContext({
      logger: context.logger,
      connection: context.connection,
      options: { allowDebug: false },
    });
    const app = createApp({
      context: quiet,
      health: createHealth({ checks: {} }),
      authenticate: createPrivacyAuth(issuer.authOptions()).authenticate,
    });
    const res = await request(app)
      .post('/part/v1')
      .set('Authorization', await admin())
      .set('X-hn-isdebug', 'true')
      .set('X-Request-Id', 'dbg-3')
      .send({ partKode: 'ok', farge: 1 });
    expect(res.status).toBe(400);
    expect(res.body.message).not.toContain('dbg-3');
  });
});

describe('when the database cannot be reached', () => {
  it('then every core operation is 500 EPVK-100503 EndpointIsDown, without internals', async () => {
    const { issuer } = h.get();
    const logger = createLogger({ name: 'test', level: 'silent' });
    // Infrastructure of its own, stopped under the app: an outage after a good start.
    const doomed = await startTestInfra();
    const connection = await connectMongo({
      uri: doomed.mongoUri,
      logger,
      serverSelectionTimeoutMS: 300,
    });
    try {
      const context = createPrivacyContext({ logger, connection });
      const app = createApp({
        context,
        health: createHealth({ checks: {} }),
        authenticate: createPrivacyAuth(issuer.authOptions()).authenticate,
      });
      await doomed.stop();
      const token = await admin();
      const operations: Array<['post' | 'put' | 'patch', string, object]> = [
        ['post', '/part/v1', { partKode: newPartKode() }],
        ['put', '/part/v1', { partKode: newPartKode() }],
        [
          'post',
          '/innstillingdefinisjon/v1',
          { definisjonMalGuid: TEMPLATES.samtykke, definisjonGuid: randomUUID(), partKode: 'p' },
        ],
        ['patch', '/innstillingdefinisjon/v1', { definisjonGuid: randomUUID(), status: 'aktiv' }],
      ];
      for (const [method, path, body] of operations) {
        const res = await request(app)[method](path).set('Authorization', token).send(body);
        expect(res.status).toBe(500);
        expect(res.body).toEqual({
          code: 'EPVK-100503',
          message: expect.any(String),
          errorCategory: 'EndpointIsDown',
        });
        expect(JSON.stringify(res.body)).not.toMatch(/Mongo|at \w+ \(/);
      }
    } finally {
      await closeMongo(connection).catch(() => undefined);
      await doomed.stop();
    }
  });
});

describe('errors of the HTTP parser', () => {
  it('when the request headers are too large, then 431 in ErrorResponse with a request id', async () => {
    const server = await listen(h.get().app, 0, '127.0.0.1');
    try {
      const { port } = server.address() as AddressInfo;
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            `GET /part/v1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
          );
        });
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 431 /);
      expect(head.toLowerCase()).toContain('x-request-id:');
      expect(JSON.parse(body)).toEqual({
        code: 'EPVK-100431',
        message: expect.any(String),
        errorCategory: 'ClientValidationError',
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** One raw exchange with privacy-api as main.ts serves it (fast path, errorsFrom: express). */
  async function rawExchange(head: string): Promise<{ head: string; body: string }> {
    const { context, health, auth } = h.get();
    const app = createPrivacyApp({ context, health, auth });
    const server = await listen(app, 0, '127.0.0.1', { errorsFrom: app.express });
    try {
      const { port } = server.address() as AddressInfo;
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(head));
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      const [answerHead = '', body = ''] = raw.split('\r\n\r\n');
      return { head: answerHead, body };
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('when a request carries an Expect the service cannot meet, then 417 in ErrorResponse with its request id', async () => {
    const token = await admin();
    const res = await rawExchange(
      `POST /personverninnstillinger/sjekkinnbyggerspistatus/v2 HTTP/1.1\r\nHost: x\r\n` +
        `Authorization: ${token}\r\nExpect: 200-ok\r\nX-Request-Id: expect-1\r\n` +
        `Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(res.head).toMatch(/^HTTP\/1\.1 417 /);
    expect(res.head).toMatch(/\r\nX-Request-Id: expect-1\r\n/i);
    expect(JSON.parse(res.body)).toEqual({
      code: 'EPVK-100417',
      message: expect.any(String),
      errorCategory: 'ClientValidationError',
    });
  });

  it('when an HTTP/1.1 request has no Host, then 400 EPVK-100400 in ErrorResponse with a request id', async () => {
    const res = await rawExchange(
      'POST /personverninnstillinger/sjekkinnbyggerspistatus/v2 HTTP/1.1\r\n' +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(res.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(res.head.toLowerCase()).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
    expect(JSON.parse(res.body)).toEqual({
      code: 'EPVK-100400',
      message: expect.any(String),
      errorCategory: 'ClientValidationError',
    });
  });
});
