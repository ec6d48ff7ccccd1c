// `npm run mongo-server -- --port <n> [--host <h>] [--data-file <path>] [--log-level <level>]`
// Runs the server until SIGINT/SIGTERM, then stops it cleanly (journal written and fsynced); a
// second signal exits at once.
import { parseArgs } from 'node:util';
import pino from 'pino';
import { start, type CompactionPoint, type JournalOptions } from './index';

const USAGE =
  'usage: npm run mongo-server -- --port <n> [--host <h>] [--data-file <path>] [--log-level <level>] [--journal-max-bytes <n>]';

/**
 * MONGO_SERVER_TEST_PAUSE_COMPACTION=<writing|written|renamed>: fault tests stop a server in the
 * middle of compaction. It logs "compaction paused (test hook)" there and never goes on.
 */
const PAUSE_POINTS: readonly CompactionPoint[] = ['writing', 'written', 'renamed'];

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string', default: '27017' },
        host: { type: 'string', default: '127.0.0.1' },
        'data-file': { type: 'string' },
        'log-level': { type: 'string', default: process.env['LOG_LEVEL'] ?? 'info' },
        'journal-max-bytes': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const logger = pino({ name: 'mongo-server', level: values['log-level'] });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    logger.fatal({ port: values.port }, 'invalid --port');
    process.exit(2);
  }
  const journal: JournalOptions = {};
  if (values['journal-max-bytes'] !== undefined) {
    const n = Number(values['journal-max-bytes']);
    if (!Number.isInteger(n) || n < 0) {
      logger.fatal({ journalMaxBytes: values['journal-max-bytes'] }, 'invalid --journal-max-bytes');
      process.exit(2);
    }
    journal.maxBytes = n;
  }
  const pauseAt = process.env['MONGO_SERVER_TEST_PAUSE_COMPACTION'] as CompactionPoint | undefined;
  if (pauseAt && PAUSE_POINTS.includes(pauseAt)) {
    journal.pauseCompaction = (point) => {
      if (point !== pauseAt) return Promise.resolve();
      logger.warn({ point }, 'compaction paused (test hook)');
      return new Promise<void>(() => undefined);
    };
  }
  const server = await start({
    port,
    host: values.host,
    dataFile: values['data-file'],
    logger,
    journal,
  });
  logger.info({ uri: server.uri, port: server.port, host: server.host }, 'ready');
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal while stopping; exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `mongo-server failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
