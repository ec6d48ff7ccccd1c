import { createPrivacyAuth, privacyAuthOptionsFromConfig } from '@nhp/privacy-auth';
import {
  followCacheInvalidations,
  privacyEventsStreamSpec,
  registerPrivacyModels,
} from '@nhp/privacy-data-access';
import { ensureBuiltIns } from '@nhp/privacy-domain';
import { loadConfigOrExit } from '@nhp/shared-config';
import { listen, closeServer } from '@nhp/shared-http';
import { metricsListener } from '@nhp/shared-metrics';
import { createHealth } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import {
  connectNats,
  drainNats,
  lazyOnceStore,
  natsIsConnected,
  provisionStreams,
  withReplicas,
  type NatsConnection,
} from '@nhp/shared-messaging';
import {
  closeMongo,
  connectMongo,
  mongoIsConnected,
  mongoOptionsFromConfig,
  mongoPing,
  prepareIndexes,
} from '@nhp/shared-persistence';
import { createShutdown } from '@nhp/shared-shutdown';
import { startTracing } from '@nhp/shared-tracing';
import { setTimeout as delay } from 'node:timers/promises';
import { createPrivacyApp } from './app';
import { privacyApiConfigSchema, resolveAllowDebug, resolveAllowSyntheticIds } from './config';
import { createPrivacyContext } from './context';
import { createPrivacyApiMetrics } from './metrics';

/** How long start-up waits for NATS (and the stream) before it serves without them. */
const NATS_START_WAIT_MS = 5000;
/** How far a DPoP proof's iat may be from now (either way); its jti is remembered twice as long. */
const DPOP_PROOF_WINDOW_SEC = 60;
const DPOP_REPLAY_BUCKET = 'privacy_dpop_jti';

async function main(): Promise<void> {
  const config = loadConfigOrExit(privacyApiConfigSchema);
  // Before anything that makes spans (MongoDB, HTTP, NATS): on only when OTEL_* asks for it.
  const tracing = startTracing({ serviceName: 'privacy-api' });
  const logger = createLogger({
    name: 'privacy-api',
    level: config.LOG_LEVEL,
    pretty: config.LOG_PRETTY,
  });
  // NATS, once connected (in the background, below).
  let nats: NatsConnection | undefined;
  const eventStream = withReplicas(privacyEventsStreamSpec, config.NATS_STREAM_REPLICAS);
  // Several instances behind a load balancer share proofs' jtis in a JetStream key-value bucket.
  const replayStore =
    config.PRIVACY_DPOP_REPLAY_STORE === 'nats'
      ? lazyOnceStore(() => nats, natsIsConnected, {
          bucket: DPOP_REPLAY_BUCKET,
          ttlMs: 2 * DPOP_PROOF_WINDOW_SEC * 1000,
          replicas: config.NATS_STREAM_REPLICAS,
        })
      : undefined;
  // Before any connection: a bad authentication setup is a configuration error, reported at once.
  const authOptions = await privacyAuthOptionsFromConfig(config, { logger });
  const auth = createPrivacyAuth({
    ...authOptions,
    dpop: {
      iatWindowSec: DPOP_PROOF_WINDOW_SEC,
      sharedReplayStore: replayStore,
      replayCacheBytes: config.PRIVACY_DPOP_REPLAY_MAX_BYTES,
    },
  });

  const mongo = await connectMongo({
    ...mongoOptionsFromConfig(config),
    logger,
    appName: 'privacy-api',
  });
  // No request is served from a database that lacks a declared index (the unique citizen +
  // definition index above all): built here, or checked when an operator builds them.
  registerPrivacyModels(mongo);
  await prepareIndexes(mongo, { ensure: config.MONGO_ENSURE_INDEXES, logger });
  const metrics = createPrivacyApiMetrics();
  const context = createPrivacyContext({
    logger,
    connection: mongo,
    nats: () => nats,
    eventStream,
    events: metrics.events,
    cacheTtlMs: config.PRIVACY_CACHE_TTL_MS,
    options: {
      basePath: config.PRIVACY_API_BASE_PATH,
      allowSyntheticIds: resolveAllowSyntheticIds(config),
      allowDebug: resolveAllowDebug(config),
      pageSize: config.PRIVACY_PAGE_SIZE,
      trustProxy: config.HTTP_TRUST_PROXY,
    },
  });
  // NATS in the background: privacy-api serves without it (events wait in the journal), but it
  // waits a moment at start so that, NATS being up, the PRIVACY_EVENTS stream exists before the
  // first /health 200 and a downstream service can add its durable consumer at once.
  let streamsReady = false;
  const stopNats = new AbortController();
  const natsReady = connectNats({ servers: config.NATS_URL, name: 'privacy-api', logger }).then(
    async (nc) => {
      if (stopNats.signal.aborted) return void (await drainNats(nc));
      nats = nc;
      // Another instance's grant or definition change drops this one's cached copy at once.
      followCacheInvalidations(nc, context, logger);
      await provisionStreams(nc, [eventStream], { logger, signal: stopNats.signal });
      // Opened again on demand when this fails (DPoP requests are refused meanwhile).
      await replayStore?.open().catch((err: unknown) => {
        logger.warn({ err }, 'DPoP replay bucket not ready yet');
      });
      streamsReady = true;
    },
  );
  natsReady.catch((err: unknown) => {
    if (!stopNats.signal.aborted) logger.error({ err }, 'nats set-up failed');
  });
  await Promise.race([natsReady.catch(() => undefined), delay(NATS_START_WAIT_MS)]);

  await ensureBuiltIns(context);
  context.journal.start();

  // Ready while MongoDB answers: during a NATS outage writes go on (their events wait in the
  // journal), so a replica must stay in the load balancer; the outage shows in the log.
  const health = createHealth({
    logger,
    checks: {
      mongo: () => mongoPing(mongo),
      nats: { check: () => streamsReady && natsIsConnected(nats), critical: false },
    },
  });
  metrics.watch({
    mongodb: () => mongoIsConnected(mongo),
    nats: () => natsIsConnected(nats),
    backlog: () => context.journal.backlog(),
    ready: async () => (await health.readiness()).ready,
  });
  const metricsPort = config.PRIVACY_API_METRICS_PORT;
  // The status check's fast path in front of the Express app (src/http/status-fast-path.ts).
  const app = createPrivacyApp({
    context,
    health,
    auth,
    metrics,
    serveMetrics: metricsPort === undefined,
  });
  // The HTTP_* server limits come from the shared environment; parser errors answer ErrorResponse
  // (errorsFrom: the Express app behind the fast path holds the formatter).
  const server = await listen(app, config.PRIVACY_API_PORT, config.PRIVACY_API_HOST, {
    ...config,
    errorsFrom: app.express,
  });
  // /metrics on a port of its own when one is configured (README, "Metrics").
  const metricsServer =
    metricsPort === undefined
      ? undefined
      : await listen(
          metricsListener(metrics.registry),
          metricsPort,
          config.PRIVACY_API_HOST,
          config,
        );
  logger.info(
    {
      port: config.PRIVACY_API_PORT,
      basePath: config.PRIVACY_API_BASE_PATH || undefined,
      metricsPort,
    },
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
        run: async () => {
          await Promise.all([
            closeServer(server, Math.floor(config.SHUTDOWN_TIMEOUT_MS * 0.6)),
            metricsServer && closeServer(metricsServer, 1000),
          ]);
        },
      },
      // Relays already started finish before their connections close; the rest wait in the
      // documents for the next start's sweep.
      { name: 'journal', run: () => context.journal.stop() },
      {
        name: 'nats',
        run: async () => {
          stopNats.abort();
          await drainNats(nats);
        },
      },
      { name: 'mongo', run: () => closeMongo(mongo) },
      // Last, when on: the spans of everything above are exported.
      ...(tracing.enabled ? [{ name: 'tracing', run: () => tracing.shutdown() }] : []),
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
