import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfigOrExit } from '@nhp/shared-config';
import { createLogger, type Logger } from '@nhp/shared-logger';
import { createImporterContext } from './app';
import { importerEnvSchema, type ImporterConfig } from './config';
import { testHooks } from './hooks';
import type { RunReport } from './importer';
import { formatHistory, formatRunReport } from './report-format';
import { runWorker } from './worker';

export const USAGE = `usage: npm run refsync-importer -- [--once | --dry-run | --history] [--allow-mass-delete] [--limit N]

  (no command)         run as a worker: nightly schedule, probe server with POST /sync, event publisher
  --once               synchronise now; exit 0 when a version was committed or nothing changed
  --dry-run            compute and print the change set; write nothing
  --history            print the most recent runs (--limit N, default 20)
  --allow-mass-delete  let this run delete more than REFSYNC_MAX_DELETE_SHARE of a dataset

exit codes: 0 committed or nothing to commit, 1 failed, 2 usage, 3 aborted (invalid upstream,
mass deletion, empty upstream), 4 skipped (another importer instance is syncing)`;

export const EXIT = { ok: 0, failed: 1, usage: 2, aborted: 3, skipped: 4 } as const;

export type Command =
  | { kind: 'worker' }
  | { kind: 'once'; allowMassDelete: boolean }
  | { kind: 'dry-run'; allowMassDelete: boolean }
  | { kind: 'history'; limit: number }
  | { kind: 'help' };

/** Parses the command line; throws with a readable message on a mistake. */
export function parseCommand(argv: string[]): Command {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      once: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      history: { type: 'boolean' },
      'allow-mass-delete': { type: 'boolean' },
      limit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length > 0) throw new Error(`unexpected argument: ${positionals[0]}`);
  if (values.help) return { kind: 'help' };
  const chosen = (['once', 'dry-run', 'history'] as const).filter((c) => values[c]);
  if (chosen.length > 1) throw new Error(`choose one of --${chosen.join(', --')}`);
  const allowMassDelete = values['allow-mass-delete'] ?? false;
  if (allowMassDelete && !values.once && !values['dry-run'])
    throw new Error('--allow-mass-delete goes with --once or --dry-run');
  if (values.limit !== undefined && !values.history) throw new Error('--limit goes with --history');
  if (values.once) return { kind: 'once', allowMassDelete };
  if (values['dry-run']) return { kind: 'dry-run', allowMassDelete };
  if (values.history) {
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new Error('--limit must be an integer 1-1000');
    return { kind: 'history', limit };
  }
  return { kind: 'worker' };
}

export function exitCodeFor(report: Pick<RunReport, 'outcome'>): number {
  switch (report.outcome) {
    case 'committed':
    case 'unchanged':
    case 'dry-run':
      return EXIT.ok;
    case 'aborted':
      return EXIT.aborted;
    case 'skipped':
      return EXIT.skipped;
    default:
      return EXIT.failed;
  }
}

const print = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);

/** Runs one command and returns the process exit code (the worker never returns). */
export async function runCommand(command: Command, config: ImporterConfig): Promise<number> {
  if (command.kind === 'help') {
    print([USAGE]);
    return EXIT.ok;
  }
  if (command.kind === 'worker') {
    const logger = createLogger({
      name: 'refsync-importer',
      level: config.LOG_LEVEL,
      pretty: config.LOG_PRETTY,
    });
    await runWorker(config, logger);
    return new Promise<number>(() => undefined);
  }

  // Commands print their report on stdout; logs go to stderr so the two never mix.
  const logger: Logger = createLogger({
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
  try {
    if (command.kind === 'history') {
      print(formatHistory(await ctx.runs.recent(command.limit)));
      return EXIT.ok;
    }
    const report = await ctx.importer.run({
      trigger: 'cli',
      dryRun: command.kind === 'dry-run',
      allowMassDelete: command.allowMassDelete,
    });
    print(formatRunReport(report));
    if (command.kind === 'once') {
      // Publish this run's event (and any older pending one) now; if NATS is away, the outbox keeps
      // it for the worker or the next run, and the sync itself still succeeded.
      await Promise.race([
        ctx.natsReady,
        new Promise((resolve) => setTimeout(resolve, 5000).unref()),
      ]);
      const summary = await ctx.publisher.publishUntilAcked(10_000);
      if (summary.pending > 0 || summary.error) {
        print([
          `events pending: ${summary.pending} (${summary.error ?? 'not acknowledged'}); the importer worker or the next run publishes them when NATS is reachable`,
        ]);
      } else if (summary.published + summary.duplicates > 0) {
        print([`events published: ${summary.published + summary.duplicates}`]);
      }
    }
    return exitCodeFor(report);
  } finally {
    // Bounded: the exit code is decided; a dependency that hangs on close must not hold the CLI.
    await Promise.race([
      ctx.close().catch((err: unknown) => logger.warn({ err }, 'close failed')),
      new Promise((resolve) => setTimeout(resolve, 5000).unref()),
    ]);
  }
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    process.exit(EXIT.usage);
  }
  const config = loadConfigOrExit(importerEnvSchema);
  const code = await runCommand(command, config);
  // Exit explicitly: a NATS connection still trying its first connect must not keep the CLI alive.
  process.exit(code);
}
