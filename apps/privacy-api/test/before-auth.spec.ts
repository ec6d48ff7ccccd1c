import http, { type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { syntheticFnr } from '@nhp/privacy-testing';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import { PATHS } from './settings-fixtures';
import { TEST_CLIENT, TEMPLATES, usePrivacyHarness } from './support/harness';

/**
 * Before a caller is authenticated, the service does only cheap work: the token is checked from
 * the headers before any body is read, inflated or parsed, and an unauthenticated request takes no
 * large-body place. Over a real socket, since what matters is what is read of it.
 */
const h = usePrivacyHarness();
let server: Server;
let port: number;

beforeAll(async () => {
  server = await listen(h.get().app, 0, '127.0.0.1', { errorsFrom: h.get().app });
  port = serverPort(server);
});

afterAll(async () => {
  server.closeAllConnections();
  await closeServer(server, 1000);
});

interface Answer {
  status: number;
  body: { code?: string; message?: string };
}

/** A POST to the set operation; `stall` sends the head and a few bytes of a chunked body only. */
function post(
  headers: Record<string, string>,
  body: Buffer | string | 'stall',
): { answer: Promise<Answer>; destroy: () => void } {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: PATHS.set,
    agent: false,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Answer['body'],
        }),
      );
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  if (body === 'stall') {
    req.setHeader('transfer-encoding', 'chunked');
    req.write('{"a":');
  } else {
    req.end(body);
  }
  return { answer, destroy: () => req.destroy() };
}

/** 6 MB of nested brackets, about 6 KB gzipped: costly to inflate and parse, cheap to send. */
const bracketBomb = () =>
  gzipSync(Buffer.from(`{"a":${'['.repeat(3_000_000)}${']'.repeat(3_000_000)}}`));

describe('before authentication', () => {
  it('when a request without a valid token sends a body, then 401 without the body being inflated or parsed', async () => {
    const auths: Array<Record<string, string>> = [{}, { authorization: 'Bearer not.a.token' }];
    for (const auth of auths) {
      const cases: Array<[Record<string, string>, Buffer | string]> = [
        [{ 'content-encoding': 'gzip' }, Buffer.from('these bytes are not gzip')],
        [{}, '{"this is": not JSON'],
        [{ 'content-type': 'text/plain' }, 'not even JSON'],
        [{ 'content-encoding': 'gzip' }, bracketBomb()],
      ];
      for (const [headers, body] of cases) {
        const { answer } = post({ ...auth, ...headers }, body);
        const res = await answer;
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('EPVK-100401');
      }
    }
  });

  it('when unauthenticated senders start large bodies and go silent, then they are answered 401 at once and an authenticated large body is served meanwhile', async () => {
    const stalled = Array.from({ length: 4 }, () => post({}, 'stall'));
    try {
      for (const s of stalled) expect((await s.answer).status).toBe(401);
      const definition = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
      await h.get().grant(TEST_CLIENT, definition.partKode);
      const body = JSON.stringify({
        innbyggerFnr: syntheticFnr(9100),
        definisjonGuid: definition.definisjonGuid,
        partKode: definition.partKode,
        typePi: definition.typePi,
        aktiv: true,
      });
      const set = post(
        { authorization: `Bearer ${await h.get().token()}`, 'content-encoding': 'gzip' },
        gzipSync(body),
      );
      expect(await set.answer).toMatchObject({ status: 200 });
    } finally {
      for (const s of stalled) s.destroy();
    }
  });
});
