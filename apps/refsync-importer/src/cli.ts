import { parseArgs } from 'node:util';
import type { RunReport } from '@nhp/refsync-import';
import type { Logger } from '@nhp/shared-logger';
import type { ImporterContext } from './context';
import { formatHistory, formatRunReport } from './report-format';

export const USAGE = `usage: npm run refsync-importer -- [--once | --dry-run | --history] [--allow-mass-delete] [--limit N]

  (no command)         run as a worker: nightly schedule, probe server with POST /sync, event publisher
  --once               synchronise now; exit 0 when a version was committed or nothing changed
  --dry-run            compute and print the change set; write nothing
  --history            print the most recent runs (--limit N, default 20)
  --allow-mass-delete  let this run delete more than REFSYNC_MAX_DELETE_SHARE of a dataset

exit codes: 0 committed or nothing to commit, 1 failed, 2 usage, 3 aborted (invalid upstream,
mass deletion, empty upstream), 4 skipped (another importer instance is syncing), 5 synchronised
but the event is still pending after REFSYNC_ONCE_PUBLISH_TIMEOUT_MS (NATS unreachable; it stays
in the outbox and the worker or the next run publishes it)`;

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  aborted: 3,
  skipped: 4,
  eventsPending: 5,
} as const;

export type Command =
  | { kind: 'worker' }
  | { kind: 'once'; allowMassDelete: boolean }
  | { kind: 'dry-run'; allowMassDelete: boolean }
  | { kind: 'history'; limit: number }
  | { kind: 'help' };

/** The command line's command, or the usage on stderr and exit code 2. */
export function parseCommandOrExit(argv: string[]): Command {
  try {
    return parseCommand(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return process.exit(EXIT.usage);
  }
}

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

export const print = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);

/** A command that runs once and exits (everything but the worker). */
export type OneShotCommand = Exclude<Command, { kind: 'worker' } | { kind: 'help' }>;

/**
 * Runs one command on the context, prints its report on stdout, closes the context and returns
 * the process exit code.
 */
export async function runCommand(
  command: OneShotCommand,
  ctx: ImporterContext,
  logger: Logger,
): Promise<number> {
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
    const code = exitCodeFor(report);
    if (command.kind !== 'once' || code !== EXIT.ok) return code;
    return (await publishBeforeExit(ctx)) ? code : EXIT.eventsPending;
  } finally {
    // Bounded: the exit code is decided; a dependency that hangs on close must not hold the CLI.
    await Promise.race([
      ctx.close().catch((err: unknown) => logger.warn({ err }, 'close failed')),
      new Promise((resolve) => setTimeout(resolve, 5000).unref()),
    ]);
  }
}

/**
 * `--once` publishes this run's event (and any older pending one) before it exits, trying for up
 * to REFSYNC_ONCE_PUBLISH_TIMEOUT_MS while NATS is down or still connecting. If the time runs
 * out, the event stays in the outbox (the sync itself succeeded) and the worker or the next run
 * publishes it. False when events are still pending.
 */
async function publishBeforeExit(ctx: ImporterContext): Promise<boolean> {
  const timeoutMs = ctx.config.REFSYNC_ONCE_PUBLISH_TIMEOUT_MS;
  const deadline = performance.now() + timeoutMs;
  await Promise.race([
    ctx.natsReady,
    new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
  ]);
  const summary = await ctx.publisher.publishUntilAcked(Math.max(0, deadline - performance.now()));
  if (summary.pending > 0 || summary.error) {
    print([
      `events pending: ${summary.pending} (${summary.error ?? 'not acknowledged'}) after ${timeoutMs} ms; ` +
        'they stay in the outbox and the importer worker or the next run publishes them when NATS is reachable',
    ]);
    return false;
  }
  if (summary.published + summary.duplicates > 0) {
    print([`events published: ${summary.published + summary.duplicates}`]);
  }
  return true;
}
