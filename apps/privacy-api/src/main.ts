import { loadConfigOrExit, resolveMongoAutoIndex } from '@nhp/shared-config';
import { listen, closeServer } from '@nhp/shared-http';
import { createHealth } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import { connectNats, drainNats, natsIsConnected } from '@nhp/shared-messaging';
import { closeMongo, connectMongo, mongoPing, syncIndexes } from '@nhp/shared-persistence';
import { createShutdown } from '@nhp/shared-shutdown';
import { createApp } from './app';
import { privacyApiConfigSchema } from './config';

async function main(): Promise<void> {
  const config = loadConfigOrExit(privacyApiConfigSchema);
  const logger = createLogger({
    name: 'privacy-api',
    level: config.LOG_LEVEL,
    pretty: config.LOG_PRETTY,
  });

  const mongo = await connectMongo({
    uri: config.MONGO_URL,
    logger,
    autoIndex: resolveMongoAutoIndex(config),
    appName: 'privacy-api',
  });
  if (config.MONGO_SYNC_INDEXES_ON_START) await syncIndexes(mongo, logger);
  const nats = await connectNats({ servers: config.NATS_URL, name: 'privacy-api', logger });

  const health = createHealth({
    checks: { mongo: () => mongoPing(mongo), nats: () => natsIsConnected(nats) },
  });
  const server = await listen(
    createApp({ logger, health }),
    config.PRIVACY_API_PORT,
    config.PRIVACY_API_HOST,
    config,
  );
  logger.info({ port: config.PRIVACY_API_PORT }, 'privacy-api listening');

  createShutdown({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    steps: [
      { name: 'readiness', run: () => health.markShuttingDown() },
      // Leave part of the deadline for the steps after HTTP: stuck connections are cut earlier.
      {
        name: 'http',
        run: () => closeServer(server, Math.floor(config.SHUTDOWN_TIMEOUT_MS * 0.6)),
      },
      { name: 'nats', run: () => drainNats(nats) },
      { name: 'mongo', run: () => closeMongo(mongo) },
    ],
  }).install();
}

main().catch((err: unknown) => {
  // Config errors exit inside loadConfigOrExit; this is a failed dependency at start.
  process.stderr.write(
    `privacy-api failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
