import { start as startMongoServer, type RunningMongoServer } from '@nhp/mongo-server';
import { createRefsyncReadRepository, knownDown } from '@nhp/refsync-data-access';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import type { Connection } from 'mongoose';
import request from 'supertest';
import { createApp } from '../src/app';
import { keyEntry, TEST_CLIENT, TEST_KEY } from './support/harness';

/**
 * MongoDB goes away for good. Server selection is configured to wait ten minutes, so a 503 can
 * only come from the driver's known-down state, not from a timeout.
 */
describe('when MongoDB is down and the driver knows it', () => {
  let server: RunningMongoServer;
  let connection: Connection;

  beforeAll(async () => {
    server = await startMongoServer({ port: 0 });
    connection = await connectMongo({
      uri: `${server.uri}/refsync_down`,
      logger: createLogger({ name: 'test', level: 'silent' }),
      serverSelectionTimeoutMS: 600_000,
    });
  }, 60_000);

  afterAll(async () => {
    await closeMongo(connection);
    await server?.stop().catch(() => undefined);
  });

  it('when a request misses the cache, then it answers 503 DATABASE_UNAVAILABLE with Retry-After instead of waiting for server selection', async () => {
    const app = createApp({
      logger: createLogger({ name: 'test', level: 'silent' }),
      reader: createRefsyncReadRepository(connection),
      apiKeys: [keyEntry(TEST_CLIENT, TEST_KEY)],
      cacheMaxBytes: 1024 * 1024,
      versionCheckIntervalMs: 3_600_000,
    });
    await app.warmUp();
    expect(app.versions.current()).toBe(0);

    await server.stop();
    // The driver notices at its next heartbeat (or failed operation): poll, no timing asserted.
    while (!knownDown(connection)) await new Promise((resolve) => setTimeout(resolve, 100));

    const res = await request(app)
      .get('/api/v1/treatmentGroup?sinceVersion=0')
      .set('X-API-KEY', TEST_KEY)
      .expect(503);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('5');
    expect(JSON.parse(res.text)).toMatchObject({
      status: 503,
      code: 'DATABASE_UNAVAILABLE',
      detail: 'The data store cannot be reached; retry later',
    });
    await app.close();
  }, 60_000);
});
