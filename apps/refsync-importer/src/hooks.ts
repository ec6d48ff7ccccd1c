import type { ImporterConfig } from './config';
import type { ImporterOptions } from '@nhp/refsync-import';

/** Printed on stdout when the pause hook is reached; tests wait for it, then kill the process. */
export const PAUSED_AFTER_STAGE = 'REFSYNC_IMPORTER_PAUSED_AFTER_STAGE';

/**
 * Fault-injection hook for the crash tests: with REFSYNC_IMPORTER_TEST_HOOK=pause-after-stage the
 * importer stops between staging a version and committing it, so a test can kill it exactly there.
 * Ignored in production, and not part of the documented configuration.
 */
export function testHooks(
  config: Pick<ImporterConfig, 'NODE_ENV'>,
  env = process.env,
): Pick<ImporterOptions, 'afterStaged'> {
  if (config.NODE_ENV === 'production' || env['REFSYNC_IMPORTER_TEST_HOOK'] !== 'pause-after-stage')
    return {};
  return {
    afterStaged: ({ nextVersion, runId }) => {
      process.stdout.write(`${PAUSED_AFTER_STAGE} version=${nextVersion} run=${runId}\n`);
      return new Promise<void>(() => undefined);
    },
  };
}
