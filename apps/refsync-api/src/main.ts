import { createRefsyncReadRepository, registerRefsyncModels } from '@nhp/refsync-data-access';
import { loadConfigOrExit } from '@nhp/shared-config';
import { healthRouter } from '@nhp/shared-health';
import { closeServer, listen } from '@nhp/shared-http';
import { metricsListener } from '@nhp/shared-metrics';
import { createLogger } from '@nhp/shared-logger';
import {
  connectNats,
  drainNats,
  natsIsConnected,
  type NatsConnection,
} from '@nhp/shared-messaging';
import {
  closeMongo,
  connectMongo,
  mongoIsConnected,
  mongoOptionsFromConfig,
  prepareIndexes,
} from '@nhp/shared-persistence';
import { createShutdown } from '@nhp/shared-shutdown';
import { startTracing } from '@nhp/shared-tracing';
import { createApp } from './app';
import { LOCAL_DEV_KEY } from './auth/api-keys';
import { refsyncApiEnvSchema, resolveApiKeys } from './config';
import { createRefsyncApiHealth } from './readiness';

async function main(): Promise<void> {
  const config = loadConfigOrExit(refsyncApiEnvSchema);
  // Before anything that makes spans (MongoDB, HTTP, NATS): on only when OTEL_* asks for it.
  const tracing = startTracing({ serviceName: 'refsync-api' });
  const logger = createLogger({
    name: 'refsync-api',
    level: config.LOG_LEVEL,
    pretty: config.LOG_PRETTY,
  });
  const { keys, usingLocalDevKey } = resolveApiKeys(config);

  const connection = await connectMongo({
    ...mongoOptionsFromConfig(config),
    logger,
    appName: 'refsync-api',
    // A miss while MongoDB is away answers 503 after at most this long; once the driver knows
    // the connection is down, at once (see README, "When MongoDB is down").
    serverSelectionTimeoutMS:
      config.REFSYNC_MONGO_SERVER_SELECTION_TIMEOUT_MS ?? config.MONGO_SERVER_SELECTION_TIMEOUT_MS,
  });
  registerRefsyncModels(connection);
  await prepareIndexes(connection, { ensure: config.MONGO_ENSURE_INDEXES, logger });
  // NATS is not waited for: data is served without it (the sync-completed event only makes a new
  // version visible sooner than the periodic check), so the service also starts, and is ready,
  // during a NATS outage, and subscribes once connectNats gets through.
  let nats: NatsConnection | undefined;
  let stopping = false;
  const natsConnecting = connectNats({ servers: config.NATS_URL, name: 'refsync-api', logger });

  const health = createRefsyncApiHealth({ logger, connection, nats: () => nats });
  const app = createApp({
    logger,
    reader: createRefsyncReadRepository(connection),
    apiKeys: keys,
    health: healthRouter(health, { probes: true }),
    cacheMaxBytes: config.REFSYNC_CACHE_MAX_BYTES,
    versionCheckIntervalMs: config.REFSYNC_VERSION_CHECK_INTERVAL_MS,
    connections: {
      mongodb: () => mongoIsConnected(connection),
      nats: () => natsIsConnected(nats),
    },
    ready: async () => (await health.readiness()).ready,
    serveMetrics: config.REFSYNC_API_METRICS_PORT === undefined,
  });
  const version = await app.warmUp();
  natsConnecting.then(
    (nc) => {
      if (stopping) return void drainNats(nc);
      nats = nc;
      app.listenForEvents(nc);
    },
    (err: unknown) =>
      logger.error(
        { err },
        'nats connection failed; only the periodic check refreshes the version',
      ),
  );

  const server = await listen(app, config.REFSYNC_API_PORT, config.REFSYNC_API_HOST, {
    ...config,
    errorsFrom: app.express,
  });
  // /metrics on a port of its own when one is configured (README, "Metrics").
  const metricsServer =
    config.REFSYNC_API_METRICS_PORT === undefined
      ? undefined
      : await listen(
          metricsListener(app.metrics.registry),
          config.REFSYNC_API_METRICS_PORT,
          config.REFSYNC_API_HOST,
          config,
        );
  logger.info(
    {
      port: config.REFSYNC_API_PORT,
      metricsPort: config.REFSYNC_API_METRICS_PORT,
      host: config.REFSYNC_API_HOST,
      dataVersion: version,
      apiClients: keys.map((k) => k.client),
      cacheMaxBytes: config.REFSYNC_CACHE_MAX_BYTES,
      versionCheckIntervalMs: config.REFSYNC_VERSION_CHECK_INTERVAL_MS,
    },
    'refsync-api listening',
  );
  if (usingLocalDevKey) {
    logger.warn(
      { nodeEnv: config.NODE_ENV },
      `REFSYNC_API_KEYS is not set: accepting the development key "${LOCAL_DEV_KEY}" (never in production)`,
    );
  }

  createShutdown({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    steps: [
      {
        name: 'readiness',
        run: async () => {
          stopping = true;
          health.markShuttingDown();
        },
      },
      {
        name: 'http',
        run: async () => {
          await Promise.all([
            closeServer(server, config.SHUTDOWN_TIMEOUT_MS),
            metricsServer && closeServer(metricsServer, 1000),
          ]);
        },
      },
      { name: 'refsync-api', run: () => app.close() },
      { name: 'nats', run: () => drainNats(nats) },
      { name: 'mongo', run: () => closeMongo(connection) },
      // Last, when on: the spans of everything above are exported.
      ...(tracing.enabled ? [{ name: 'tracing', run: () => tracing.shutdown() }] : []),
    ],
  }).install({ processErrors: true });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `refsync-api failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
