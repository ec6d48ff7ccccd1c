import type { Dataset } from '@nhp/refsync-contracts';

/**
 * The visibility rule: at committed version V a document is visible iff it was written at or before
 * V and not yet superseded at V. Staged documents of an uncommitted V+1 fail the first test; the
 * documents they replace pass the second (supersededAt = V+1 > V). So a reader that fixed V first
 * sees exactly version V, whatever the writer is doing.
 */
export function visibleAt(dataset: Dataset, version: number) {
  return {
    dataset,
    version: { $lte: version },
    $or: [{ supersededAt: null }, { supersededAt: { $gt: version } }],
  };
}

/** Visible documents changed after `since`: the diff. */
export function changedSinceAt(dataset: Dataset, since: number, version: number) {
  return {
    dataset,
    version: { $gt: since, $lte: version },
    $or: [{ supersededAt: null }, { supersededAt: { $gt: version } }],
  };
}

/** Response order: version, then id, so identical requests give identical bytes. */
export const RESPONSE_ORDER = { version: 1, itemId: 1 } as const;
