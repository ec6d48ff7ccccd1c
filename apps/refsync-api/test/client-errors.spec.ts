/**
 * Requests the client got wrong below the level of a route: a body its Content-Encoding does not
 * describe, a body that is not text, an Expect the service cannot meet, no Host. refsync-api
 * serves no body, but Express reads one on any method that takes it before routing, and the server
 * sees Expect and Host before the fast path does: each is answered in problem details with the
 * request id, never 500 and never Node's empty answer.
 */
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createLogger } from '@nhp/shared-logger';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import request from 'supertest';
import type { DatasetReader } from '@nhp/refsync-read';
import { createApp, type RefsyncApp } from '../src/app';
import { keyEntry, TEST_CLIENT, TEST_KEY } from './support/harness';

/** A reader with one empty version: these requests never get as far as the data. */
const reader: DatasetReader = {
  currentVersion: () => Promise.resolve(1),
  scanItems: async () => [],
};

function appUnderTest(): RefsyncApp {
  return createApp({
    logger: createLogger({ name: 'test', level: 'silent' }),
    reader,
    apiKeys: [keyEntry(TEST_CLIENT, TEST_KEY)],
    cacheMaxBytes: 1024 * 1024,
    versionCheckIntervalMs: 3_600_000,
  });
}

/** Sends bytes as they are (superagent would serialize a Buffer under a JSON type as JSON). */
function withBytes(req: request.Test, bytes: Buffer): request.Test {
  const body = bytes as unknown as string;
  return req.serialize(() => body).send(body);
}

const problem = (status: number, code: string, instance: string) => ({
  type: 'about:blank',
  title: expect.any(String),
  status,
  detail: expect.any(String),
  instance,
  code,
});

describe('bodies the client got wrong', () => {
  const app = appUnderTest();
  afterAll(() => app.close());

  it.each(['gzip', 'br', 'deflate'])(
    'when a body says Content-Encoding: %s but is not, then 400 problem details with the request id, not 500',
    async (encoding) => {
      for (const path of ['/api/v1/treatmentGroup', '/api/v1/nothing-here']) {
        const res = await withBytes(
          request(app)
            .post(path)
            .set('X-API-KEY', TEST_KEY)
            .set('Content-Type', 'application/json')
            .set('Content-Encoding', encoding)
            .set('X-Request-Id', 'enc-1'),
          Buffer.from('{"a":1}'),
        );
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.headers['x-request-id']).toBe('enc-1');
        expect(JSON.parse(res.text)).toEqual(problem(400, 'MALFORMED_CONTENT_ENCODING', path));
      }
    },
  );

  it('when a body is really gzip-compressed, then it is read and the route answers as without one (405)', async () => {
    const res = await withBytes(
      request(app)
        .post('/api/v1/treatmentGroup')
        .set('X-API-KEY', TEST_KEY)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip'),
      gzipSync(Buffer.from('{"a":1}')),
    );
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toContain('GET');
  });

  it('when the encoding is one the service does not decode (compress), then 415 problem details', async () => {
    const res = await withBytes(
      request(app)
        .post('/api/v1/treatmentGroup')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'compress'),
      Buffer.from('{"a":1}'),
    );
    expect(res.status).toBe(415);
    expect(JSON.parse(res.text)).toEqual(
      problem(415, 'UNSUPPORTED_CONTENT_ENCODING', '/api/v1/treatmentGroup'),
    );
  });

  it('when a JSON body holds an unpaired surrogate, then 400 problem details before routing', async () => {
    const res = await request(app)
      .post('/api/v1/treatmentGroup')
      .set('Content-Type', 'application/json')
      .send('{"since-version":"\\ud800"}');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual(problem(400, 'MALFORMED_JSON', '/api/v1/treatmentGroup'));
  });
});

describe('requests Node would answer itself', () => {
  const app = appUnderTest();
  let server: Server;
  beforeAll(async () => {
    // As main.ts listens: parser errors and refusals come from the Express app behind the fast path.
    server = await listen(app, 0, '127.0.0.1', { errorsFrom: app.express });
  });
  afterAll(async () => {
    await closeServer(server, 0);
    await app.close();
  });

  function exchange(head: string): Promise<{ head: string; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect(serverPort(server), '127.0.0.1', () => socket.write(head));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => {
        const split = text.indexOf('\r\n\r\n');
        resolve({ head: text.slice(0, split), body: text.slice(split + 4) });
      });
      socket.on('error', reject);
    });
  }

  it('when a read carries an Expect the service cannot meet, then 417 problem details with its request id', async () => {
    const res = await exchange(
      `GET /api/v1/treatmentGroup HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${TEST_KEY}\r\n` +
        'Expect: something\r\nX-Request-Id: expect-1\r\n\r\n',
    );
    expect(res.head).toMatch(/^HTTP\/1\.1 417 /);
    expect(res.head).toMatch(/\r\nContent-Type: application\/problem\+json/i);
    expect(res.head).toMatch(/\r\nX-Request-Id: expect-1\r\n/i);
    expect(JSON.parse(res.body)).toEqual(
      problem(417, 'EXPECTATION_FAILED', '/api/v1/treatmentGroup'),
    );
  });

  it('when an HTTP/1.1 read has no Host, then 400 problem details with a request id', async () => {
    const res = await exchange(
      `GET /api/v1/treatmentGroup?since-version=0 HTTP/1.1\r\nX-API-KEY: ${TEST_KEY}\r\n\r\n`,
    );
    expect(res.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(res.head.toLowerCase()).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
    expect(JSON.parse(res.body)).toEqual(problem(400, 'MISSING_HOST', '/api/v1/treatmentGroup'));
  });

  it('when an HTTP/1.0 read has no Host, then it is served', async () => {
    const res = await exchange(
      `GET /api/v1/treatmentGroup HTTP/1.0\r\nX-API-KEY: ${TEST_KEY}\r\n\r\n`,
    );
    expect(res.head).toMatch(/^HTTP\/1\.1 200 /);
  });
});
