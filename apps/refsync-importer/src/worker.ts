import { Cron } from 'croner';
import { closeServer, listen } from '@nhp/shared-http';
import type { Logger } from '@nhp/shared-logger';
import { natsIsConnected } from '@nhp/shared-messaging';
import { mongoPing } from '@nhp/shared-persistence';
import { createShutdown } from '@nhp/shared-shutdown';
import { createImporterContext } from './app';
import { adminToken, LOCAL_ADMIN_TOKEN, type ImporterConfig } from './config';
import { testHooks } from './hooks';
import { createProbeApp } from './probe-app';

/**
 * The long-running importer: runs on the cron schedule, serves probes, metrics and POST /sync, and
 * publishes outbox events on start, after every run, and periodically until JetStream has them.
 */
export async function runWorker(config: ImporterConfig, logger: Logger): Promise<void> {
  const token = adminToken(config);
  const ctx = await createImporterContext({ config, logger, ...testHooks(config) });
  ctx.publisher.start(config.REFSYNC_PUBLISH_INTERVAL_MS);

  const { app, health } = createProbeApp({
    logger,
    importer: ctx.importer,
    leases: ctx.leases,
    runs: ctx.runs,
    instance: ctx.instance,
    metrics: ctx.metrics,
    adminToken: token.token,
    checks: { mongodb: () => mongoPing(ctx.conn), nats: () => natsIsConnected(ctx.nats()) },
  });
  const server = await listen(
    app,
    config.REFSYNC_IMPORTER_PORT,
    config.REFSYNC_IMPORTER_HOST,
    config,
  );

  // protect: a run that outlasts the interval is not started twice by the scheduler.
  const job = new Cron(
    config.REFSYNC_SCHEDULE,
    {
      name: 'refsync-sync',
      timezone: config.REFSYNC_TIMEZONE,
      protect: true,
      catch: (err: unknown) => logger.error({ err }, 'scheduled run failed'),
    },
    async () => {
      await ctx.importer.run({ trigger: 'schedule' });
    },
  );

  logger.info(
    {
      port: config.REFSYNC_IMPORTER_PORT,
      host: config.REFSYNC_IMPORTER_HOST,
      schedule: config.REFSYNC_SCHEDULE,
      timezone: config.REFSYNC_TIMEZONE,
      nextRun: job.nextRun()?.toISOString(),
      sources: Object.fromEntries(Object.entries(ctx.sources).map(([d, s]) => [d, s.description])),
      instance: ctx.instance,
      // Never the token itself, unless it is the public development default.
      adminToken: token.isDefault ? `${LOCAL_ADMIN_TOKEN} (development default)` : 'configured',
    },
    'refsync-importer listening',
  );
  // An empty store (first start, a fresh dev stack) syncs at once instead of waiting for the night.
  if ((await ctx.writeRepo.readState()).version === 0) {
    const first = ctx.importer.begin({ trigger: 'start' });
    if ('done' in first) {
      logger.info({ runId: first.runId }, 'no data version committed yet: synchronising now');
      first.done.catch((err: unknown) => logger.error({ err }, 'initial run failed'));
    }
  }
  if (token.isDefault) {
    logger.warn(
      `REFSYNC_IMPORTER_ADMIN_TOKEN is not set: POST /sync accepts the development token "${LOCAL_ADMIN_TOKEN}" (outside production only)`,
    );
  }

  // A sync in progress is not awaited: it is crash-safe by design (the next run cleans up), and a
  // long import must not hold a deploy past the shutdown timeout.
  createShutdown({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    steps: [
      { name: 'mark not ready', run: () => health.markShuttingDown() },
      { name: 'stop schedule', run: () => job.stop() },
      {
        name: 'close HTTP server',
        run: () => closeServer(server, Math.floor(config.SHUTDOWN_TIMEOUT_MS / 2)),
      },
      { name: 'stop publisher, drain NATS, close MongoDB', run: () => ctx.close() },
    ],
  }).install();
}
