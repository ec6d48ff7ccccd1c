import { createPrivacyAuth, privacyAuthOptionsFromConfig } from '@nhp/privacy-auth';
import { ensureJournalIndexes } from '@nhp/privacy-data-access';
import { loadConfigOrExit, resolveMongoAutoIndex } from '@nhp/shared-config';
import { listen, closeServer } from '@nhp/shared-http';
import { createHealth } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import { connectNats, drainNats, natsIsConnected } from '@nhp/shared-messaging';
import { closeMongo, connectMongo, mongoPing, syncIndexes } from '@nhp/shared-persistence';
import { createShutdown } from '@nhp/shared-shutdown';
import { createPrivacyApp } from './app';
import { ensureBuiltIns } from './bootstrap';
import { privacyApiConfigSchema, resolveAllowDebug, resolveAllowSyntheticIds } from './config';
import { createPrivacyContext } from './context';

async function main(): Promise<void> {
  const config = loadConfigOrExit(privacyApiConfigSchema);
  const logger = createLogger({
    name: 'privacy-api',
    level: config.LOG_LEVEL,
    pretty: config.LOG_PRETTY,
  });
  // Before any connection: a bad authentication setup is a configuration error, reported at once.
  const auth = createPrivacyAuth(await privacyAuthOptionsFromConfig(config, { logger }));

  const mongo = await connectMongo({
    uri: config.MONGO_URL,
    logger,
    autoIndex: resolveMongoAutoIndex(config),
    appName: 'privacy-api',
  });
  const nats = await connectNats({ servers: config.NATS_URL, name: 'privacy-api', logger });

  const context = createPrivacyContext({
    logger,
    connection: mongo,
    nats,
    options: {
      basePath: config.PRIVACY_API_BASE_PATH,
      allowSyntheticIds: resolveAllowSyntheticIds(config),
      allowDebug: resolveAllowDebug(config),
      pageSize: config.PRIVACY_PAGE_SIZE,
      trustProxy: config.HTTP_TRUST_PROXY,
    },
  });
  // The models exist once the context is built, so index sync sees every declared index.
  if (config.MONGO_SYNC_INDEXES_ON_START) await syncIndexes(mongo, logger);
  // The journal's collections have no mongoose model: their indexes are built here, on the same
  // occasions as the models' (automatic outside production, or the deliberate sync at start).
  if (resolveMongoAutoIndex(config) || config.MONGO_SYNC_INDEXES_ON_START) {
    await ensureJournalIndexes(mongo);
  }
  await ensureBuiltIns(context);
  context.journal.start();

  const health = createHealth({
    checks: { mongo: () => mongoPing(mongo), nats: () => natsIsConnected(nats) },
  });
  // The status check's fast path in front of the Express app (src/http/status-fast-path.ts).
  const app = createPrivacyApp({ context, health, auth });
  // The HTTP_* server limits come from the shared environment; parser errors answer ErrorResponse
  // (errorsFrom: the Express app behind the fast path holds the formatter).
  const server = await listen(app, config.PRIVACY_API_PORT, config.PRIVACY_API_HOST, {
    ...config,
    errorsFrom: app.express,
  });
  logger.info(
    { port: config.PRIVACY_API_PORT, basePath: config.PRIVACY_API_BASE_PATH || undefined },
    'privacy-api listening',
  );

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
      // Relays already started finish before their connections close; the rest wait in the
      // documents for the next start's sweep.
      { name: 'journal', run: () => context.journal.stop() },
      { name: 'nats', run: () => drainNats(nats) },
      { name: 'mongo', run: () => closeMongo(mongo) },
    ],
  }).install({ processErrors: true });
}

main().catch((err: unknown) => {
  // Config errors exit inside loadConfigOrExit; this is a failed dependency at start.
  process.stderr.write(
    `privacy-api failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
