import { createHealth } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import {
  connectNats,
  drainNats,
  natsIsConnected,
  type NatsConnection,
} from '@nhp/shared-messaging';
import { closeMongo, connectMongo, mongoPing } from '@nhp/shared-persistence';
import { useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import request from 'supertest';
import { createApp } from '../src/app';

const infra = useTestInfra();
const logger = createLogger({ name: 'privacy-api-test', level: 'silent' });

describe('privacy-api app shell', () => {
  let mongo: Connection;
  let nats: NatsConnection;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    mongo = await connectMongo({ uri: infra.get().mongoUri, logger });
    nats = await connectNats({
      servers: infra.get().natsUrl,
      name: 'test',
      logger,
      reconnectTimeWaitMs: 100,
    });
    const health = createHealth({
      checks: { mongo: () => mongoPing(mongo), nats: () => natsIsConnected(nats) },
    });
    app = createApp({ logger, health });
  });
  afterAll(async () => {
    await drainNats(nats);
    await closeMongo(mongo);
  });

  it('when MongoDB and NATS are up, then GET /health is 200 with no body', async () => {
    const res = await request(app).get('/health');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it('when NATS is down, then GET /health is 503, and 200 again once it is back', async () => {
    await infra.get().stopNats();
    try {
      let status = 0;
      for (let i = 0; i < 50 && status !== 503; i++) {
        status = (await request(app).get('/health')).status;
        if (status !== 503) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(503);
    } finally {
      await infra.get().startNats();
    }
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await request(app).get('/health')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });

  it('when a path is unknown, then 404 carries the ErrorResponse body', async () => {
    const res = await request(app).get('/no/such/path');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      code: expect.any(String),
      message: expect.any(String),
      errorCategory: 'ClientValidationError',
    });
  });

  it('when a request carries X-Request-Id, then the response echoes it', async () => {
    const res = await request(app).get('/health').set('X-Request-Id', 'abc-123');
    expect(res.headers['x-request-id']).toBe('abc-123');
  });
});
