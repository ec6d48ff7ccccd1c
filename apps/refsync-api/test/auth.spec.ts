import { generateApiKey } from '@nhp/refsync-keys';
import { createHealth, healthRouter } from '@nhp/shared-health';
import { natsIsConnected } from '@nhp/shared-messaging';
import { mongoPing } from '@nhp/shared-persistence';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '@nhp/shared-http';
import request from 'supertest';
import { DATASET_ROUTES } from '@nhp/refsync-read';
import { parseApiKeys } from '../src/auth/api-keys';
import {
  keyEntry,
  LogCapture,
  put,
  startHarness,
  tg,
  TEST_CLIENT,
  TEST_KEY,
  type Harness,
} from './support/harness';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
  await harness.commit({ treatmentGroup: [put(tg('TG-1', 'Diabetes'))] });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

describe('X-API-KEY', () => {
  it.each(DATASET_ROUTES.map((r) => r.path))(
    'when %s is asked without a key, with a wrong key or with a malformed one, then 401 with one and the same body',
    async (path) => {
      const app = harness.app();
      const missing = await request(app)
        .get(path)
        .expect(401)
        .expect('Content-Type', /application\/problem\+json/);
      const wrong = await request(app).get(path).set('X-API-KEY', 'not-the-key').expect(401);
      const malformed = await request(app).get(path).set('X-API-KEY', 'x'.repeat(5000)).expect(401);
      const empty = await request(app).get(path).set('X-API-KEY', '').expect(401);
      expect(JSON.parse(missing.text)).toEqual({
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        detail: 'A valid X-API-KEY header is required',
        instance: path,
        code: 'UNAUTHORIZED',
      });
      for (const res of [wrong, malformed, empty]) expect(res.text).toBe(missing.text);
      expect(missing.headers['www-authenticate']).toContain('X-API-KEY');
    },
  );

  it('when two keys are configured during a rotation, then both are accepted; once the old one is removed, it is refused', async () => {
    const oldKey = generateApiKey('apotek-1');
    const newKey = generateApiKey('apotek-1');
    const parsed = parseApiKeys(`${oldKey.entry},${newKey.entry}`);
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    const during = harness.app({ apiKeys: parsed.keys });
    await request(during).get('/api/v1/treatmentGroup').set('X-API-KEY', oldKey.key).expect(200);
    await request(during).get('/api/v1/treatmentGroup').set('X-API-KEY', newKey.key).expect(200);

    const after = harness.app({ apiKeys: [keyEntry('apotek-1', newKey.key)] });
    await request(after).get('/api/v1/treatmentGroup').set('X-API-KEY', newKey.key).expect(200);
    // Twice: the second request would be answered by the fast path if it accepted the key.
    await request(after).get('/api/v1/treatmentGroup').set('X-API-KEY', oldKey.key).expect(401);
    await request(after).get('/api/v1/treatmentGroup').set('X-API-KEY', oldKey.key).expect(401);
  });

  it('when a client is served, then the logs name the client and never contain its key', async () => {
    const logs = new LogCapture('debug');
    const app = harness.app({ logger: logs.logger });
    await request(app).get('/api/v1/treatmentGroup').set('X-API-KEY', TEST_KEY).expect(200); // Express path
    await request(app).get('/api/v1/treatmentGroup').set('X-API-KEY', TEST_KEY).expect(200); // fast path
    await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', 'a-wrong-key-value')
      .expect(401);

    const served = logs.lines.filter((l) => l['client'] === 'acme');
    expect(served.map((l) => l['msg'])).toEqual(expect.arrayContaining(['served from memory']));
    expect(served.length).toBeGreaterThanOrEqual(2);
    const all = logs.raw.join('\n');
    expect(all).not.toContain(TEST_KEY);
    expect(all).not.toContain('a-wrong-key-value');
  });
});

describe('a key remembered per connection', () => {
  it('when one keep-alive connection sends a valid key, then a wrong or another key on it is still checked in full', async () => {
    const other = generateApiKey('apotek-2');
    const app = harness.app({
      apiKeys: [keyEntry(TEST_CLIENT, TEST_KEY), keyEntry('apotek-2', other.key)],
    });
    const logs = new LogCapture('debug');
    const logged = harness.app({
      logger: logs.logger,
      apiKeys: [keyEntry(TEST_CLIENT, TEST_KEY), keyEntry('apotek-2', other.key)],
    });
    for (const target of [app, logged]) {
      const server = await listen(target, 0, '127.0.0.1');
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const statuses: number[] = [];
        for (const key of [TEST_KEY, TEST_KEY, 'wrong-key', TEST_KEY, other.key, '']) {
          statuses.push(await getStatus(server, agent, key));
        }
        expect(statuses).toEqual([200, 200, 401, 200, 200, 401]);
      } finally {
        agent.destroy();
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    }
    const clients = logs.lines
      .filter((l) => l['msg'] === 'served from memory')
      .map((l) => l['client']);
    expect(clients).toEqual(['acme', 'acme', 'apotek-2']);
  });
});

function getStatus(server: Server, agent: http.Agent, key: string): Promise<number> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    http
      .get(
        {
          host: '127.0.0.1',
          port,
          path: '/api/v1/treatmentGroup',
          agent,
          headers: { 'X-API-KEY': key },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      )
      .on('error', reject);
  });
}

describe('endpoints without a key', () => {
  it('when the probes are asked without a key, then they answer', async () => {
    const health = createHealth({
      checks: {
        mongo: () => mongoPing(harness.connection),
        nats: () => natsIsConnected(harness.nats),
      },
    });
    const app = harness.app({ health: healthRouter(health, { probes: true }) });
    await request(app).get('/health').expect(200);
    await request(app).get('/livez').expect(200);
    const ready = await request(app).get('/readyz').expect(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { mongo: true, nats: true } });
  });

  it('when the API description is asked without a key, then it is served: it holds schemas, not data', async () => {
    const app = harness.app();
    await request(app)
      .get('/openapi.json')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    const docs = await request(app)
      .get('/docs')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    expect(docs.text).not.toContain('Diabetes'); // no item data on the page
  });
});
