/**
 * refsync-importer: one process, two ways to run (see README.md).
 * - No arguments: the worker. The outbox publisher loop, the probe server (health, metrics,
 *   POST /sync) and the nightly schedule, all on one importer context, until SIGTERM.
 * - `--once`, `--dry-run`, `--history`: one command, its report on stdout, logs on stderr, then
 *   exit with the outcome's code (cli.ts).
 * The use case itself (run coordinator, lease, outbox publisher) is @nhp/refsync-import.
 */
import pino from 'pino';
import { loadConfigOrExit } from '@nhp/shared-config';
import { closeServer, listen } from '@nhp/shared-http';
import { createLogger } from '@nhp/shared-logger';
import { natsIsConnected } from '@nhp/shared-messaging';
import { mongoPing } from '@nhp/shared-persistence';
import { createShutdown } from '@nhp/shared-shutdown';
import { startTracing } from '@nhp/shared-tracing';
import { EXIT, parseCommandOrExit, print, runCommand, USAGE } from './cli';
import { adminToken, importerEnvSchema, LOCAL_ADMIN_TOKEN } from './config';
import { createImporterContext } from './context';
import { testHooks } from './hooks';
import { createProbeApp } from './probe-app';
import { startSchedule, syncIfNeverCommitted } from './worker';

async function main(argv: string[]): Promise<void> {
  const command = parseCommandOrExit(argv);
  if (command.kind === 'help') {
    print([USAGE]);
    process.exit(EXIT.ok);
  }
  const config = loadConfigOrExit(importerEnvSchema);
  // Before anything that makes spans (MongoDB, HTTP, NATS): on only when OTEL_* asks for it.
  const tracing = startTracing({ serviceName: 'refsync-importer' });

  if (command.kind !== 'worker') {
    // Commands print their report on stdout; logs go to stderr so the two never mix.
    const logger = createLogger({
      name: 'refsync-importer',
      level: config.LOG_LEVEL,
      destination: pino.destination({ dest: 2, sync: true }),
    });
    const ctx = await createImporterContext({
      config,
      logger,
      connectToNats: command.kind === 'once',
      ...testHooks(config),
    });
    // Exit explicitly: a NATS connection still trying its first connect must not keep the CLI alive.
    const code = await runCommand(command, ctx, logger);
    // The run's spans are exported before the exit.
    await tracing.shutdown().catch(() => undefined);
    process.exit(code);
  }

  const logger = createLogger({
    name: 'refsync-importer',
    level: config.LOG_LEVEL,
    pretty: config.LOG_PRETTY,
  });
  const ctx = await createImporterContext({ config, logger, ...testHooks(config) });
  ctx.publisher.start(config.REFSYNC_PUBLISH_INTERVAL_MS);

  const token = adminToken(config);
  const { app, health } = createProbeApp({
    logger,
    importer: ctx.importer,
    leases: ctx.leases,
    runs: ctx.runs,
    instance: ctx.instance,
    metrics: ctx.metrics,
    adminToken: token.token,
    // MongoDB only: a NATS outage delays events (the outbox keeps them) and shows in /metrics and
    // the log; it does not make the worker unready.
    checks: {
      mongodb: () => mongoPing(ctx.conn),
      nats: { check: () => natsIsConnected(ctx.nats()), critical: false },
    },
  });
  const server = await listen(
    app,
    config.REFSYNC_IMPORTER_PORT,
    config.REFSYNC_IMPORTER_HOST,
    config,
  );
  const schedule = startSchedule(ctx, logger);
  let stopping = false;
  // Installed as soon as the server listens: a signal that came before (during the first sync's
  // check, say) ended the process without its steps. A sync in progress is not awaited: it is
  // crash-safe by design (the next run cleans up), and a long import must not hold a deploy past
  // the shutdown timeout.
  createShutdown({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    steps: [
      {
        name: 'mark not ready',
        run: () => {
          stopping = true;
          health.markShuttingDown();
        },
      },
      { name: 'stop schedule', run: () => schedule.stop() },
      {
        name: 'close HTTP server',
        run: () => closeServer(server, Math.floor(config.SHUTDOWN_TIMEOUT_MS / 2)),
      },
      { name: 'stop publisher, drain NATS, close MongoDB', run: () => ctx.close() },
      // Last, when on: the spans of everything above are exported.
      ...(tracing.enabled ? [{ name: 'tracing', run: () => tracing.shutdown() }] : []),
    ],
  }).install({ processErrors: true });

  logger.info(
    {
      port: config.REFSYNC_IMPORTER_PORT,
      host: config.REFSYNC_IMPORTER_HOST,
      schedule: config.REFSYNC_SCHEDULE,
      timezone: config.REFSYNC_TIMEZONE,
      nextRun: schedule.nextRun()?.toISOString(),
      sources: Object.fromEntries(Object.entries(ctx.sources).map(([d, s]) => [d, s.description])),
      instance: ctx.instance,
      // Never the token itself, unless it is the public development default.
      adminToken: token.isDefault ? `${LOCAL_ADMIN_TOKEN} (development default)` : 'configured',
    },
    'refsync-importer listening',
  );
  if (token.isDefault) {
    logger.warn(
      `REFSYNC_IMPORTER_ADMIN_TOKEN is not set: POST /sync accepts the development token "${LOCAL_ADMIN_TOKEN}" (outside production only)`,
    );
  }
  await syncIfNeverCommitted(ctx, logger).catch((err: unknown) => {
    // A stop that began meanwhile closed the connection under it: not a failed start.
    if (!stopping) throw err;
  });
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(
    `refsync-importer: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
