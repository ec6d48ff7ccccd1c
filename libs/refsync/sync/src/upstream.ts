/**
 * The upstream snapshots of a run: opened, read and closed. An upstream that cannot be opened or
 * read to its end aborts the run (it is not a bug of the sync).
 */
import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import type { UpstreamRecord, UpstreamSnapshot } from './ports';
import { syncAborted } from './report';
import type { RunContext } from './types';

/** Opens every dataset's upstream; each one opened is put in `opened` at once, for closing. */
export async function openSnapshots(
  run: RunContext,
  opened: Partial<Record<Dataset, UpstreamSnapshot>>,
): Promise<Record<Dataset, UpstreamSnapshot>> {
  for (const dataset of DATASETS) {
    try {
      opened[dataset] = await run.deps.sources[dataset].open({
        logger: run.log,
        runId: run.options.runId,
      });
    } catch (err) {
      throw syncAborted(
        'upstream_unavailable',
        `${dataset}: ${(err as Error).message}`,
        {},
        { cause: err },
      );
    }
  }
  return opened as Record<Dataset, UpstreamSnapshot>;
}

export async function closeSnapshots(
  run: RunContext,
  opened: Partial<Record<Dataset, UpstreamSnapshot>>,
): Promise<void> {
  for (const snapshot of Object.values(opened)) {
    await snapshot
      .close()
      .catch((err: unknown) => run.log.warn({ err }, 'could not close upstream snapshot'));
  }
}

/**
 * The snapshot's records; a file that cannot be read to its end (malformed structure, cut off,
 * read error) aborts the run as invalid upstream instead of failing it as a bug.
 */
export async function* readable(
  dataset: Dataset,
  snapshot: UpstreamSnapshot,
): AsyncGenerator<UpstreamRecord> {
  try {
    yield* snapshot.records();
  } catch (err) {
    throw syncAborted(
      'invalid_upstream',
      `${dataset}: ${(err as Error).message}; nothing committed`,
      {},
      { cause: err },
    );
  }
}
