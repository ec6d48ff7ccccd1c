import { healthRouter } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import { natsIsConnected } from '@nhp/shared-messaging';
import request from 'supertest';
import { createRefsyncApiHealth } from '../src/readiness';
import { eventually, put, startHarness, tg, TEST_KEY, type Harness } from './support/harness';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
  await harness.commit({ treatmentGroup: [put(tg('TG-1', 'Insulin'))] });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

describe('readiness', () => {
  it('when NATS is down, then /readyz stays 200 and reports NATS as degraded, and data is still served', async () => {
    const health = createRefsyncApiHealth({
      logger: createLogger({ name: 'test', level: 'silent' }),
      connection: harness.connection,
      nats: () => harness.nats,
    });
    const app = harness.app({ health: healthRouter(health, { probes: true }) });

    const before = await request(app).get('/readyz').expect(200);
    expect(before.body).toEqual({ status: 'ok', checks: { mongo: true, nats: true } });

    await harness.infra.stopNats();
    try {
      await eventually(() => !natsIsConnected(harness.nats), 'the NATS client sees the outage');
      const during = await request(app).get('/readyz').expect(200);
      expect(during.body).toEqual({
        status: 'degraded',
        checks: { mongo: true, nats: false },
        degraded: ['nats'],
      });
      await request(app).get('/health').expect(200);
      const res = await request(app)
        .get('/api/v1/treatmentGroup')
        .set('X-API-KEY', TEST_KEY)
        .expect(200);
      expect(res.body.items.map((i: { data: { id: string } }) => i.data.id)).toEqual(['TG-1']);
    } finally {
      await harness.infra.startNats();
    }
    await eventually(() => natsIsConnected(harness.nats), 'the NATS client reconnects');
    expect((await request(app).get('/readyz').expect(200)).body.status).toBe('ok');
  }, 60_000);
});
