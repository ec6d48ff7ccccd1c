import { Cron } from 'croner';
import type { Logger } from '@nhp/shared-logger';
import type { ImporterContext } from './context';

/**
 * The nightly run. `protect`: a run that outlasts the interval is not started twice by the
 * scheduler.
 */
export function startSchedule(ctx: ImporterContext, logger: Logger): Cron {
  return new Cron(
    ctx.config.REFSYNC_SCHEDULE,
    {
      name: 'refsync-sync',
      timezone: ctx.config.REFSYNC_TIMEZONE,
      protect: true,
      catch: (err: unknown) => logger.error({ err }, 'scheduled run failed'),
    },
    async () => {
      await ctx.importer.run({ trigger: 'schedule' });
    },
  );
}

/**
 * An empty store (first start, a fresh dev stack) syncs at once instead of waiting for the night.
 * Not awaited: the worker serves its probes meanwhile.
 */
export async function syncIfNeverCommitted(ctx: ImporterContext, logger: Logger): Promise<void> {
  if ((await ctx.writeRepo.readState()).version !== 0) return;
  const first = ctx.importer.begin({ trigger: 'start' });
  if ('done' in first) {
    logger.info({ runId: first.runId }, 'no data version committed yet: synchronising now');
    first.done.catch((err: unknown) => logger.error({ err }, 'initial run failed'));
  }
}
