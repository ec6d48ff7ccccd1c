import { createLogger } from '@nhp/shared-logger';
import { start as startMongoServer, type RunningMongoServer } from '@nhp/mongo-server';
import { freePort } from '@nhp/shared-testing';
import { closeMongo, connectMongo, mongoPing } from '../src';

const logger = createLogger({ name: 'startup-test', level: 'silent' });

describe('connecting at start-up', () => {
  let server: RunningMongoServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('when MongoDB comes up after the first attempt, then start-up keeps trying and connects', async () => {
    const port = await freePort();
    let waits = 0;
    const conn = await connectMongo({
      uri: `mongodb://127.0.0.1:${port}/startup`,
      logger,
      serverSelectionTimeoutMS: 200,
      // The database appears while the service waits between attempts.
      sleep: async () => {
        waits += 1;
        server ??= await startMongoServer({ port });
      },
    });
    try {
      expect(waits).toBeGreaterThanOrEqual(1);
      expect(await mongoPing(conn)).toBe(true);
    } finally {
      await closeMongo(conn);
    }
  });

  it('when MongoDB stays away past the start-up time, then connecting fails with the driver error', async () => {
    const port = await freePort();
    await expect(
      connectMongo({
        uri: `mongodb://127.0.0.1:${port}/startup`,
        logger,
        serverSelectionTimeoutMS: 100,
        startupTimeoutMs: 0,
      }),
    ).rejects.toThrow(/ECONNREFUSED|Server selection timed out|connect/);
  });
});
