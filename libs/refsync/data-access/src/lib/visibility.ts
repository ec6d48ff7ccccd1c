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

/**
 * Up to this many versions, the diff lists them explicitly. Beyond it (a client years behind) the
 * answer is close to a full list anyway, and a range is the cheaper query.
 */
export const MAX_DIFF_VERSIONS_AS_LIST = 1000;

/**
 * Visible documents changed after `since`: the diff. Versions are dense integers, so (since, V] is
 * a finite set; as an $in of point lookups it uses {dataset, version} on any engine.
 */
export function changedSinceAt(dataset: Dataset, since: number, version: number) {
  const count = version - since;
  const versions =
    count <= MAX_DIFF_VERSIONS_AS_LIST
      ? { $in: Array.from({ length: count }, (_, i) => since + 1 + i) }
      : { $gt: since, $lte: version };
  return {
    dataset,
    version: versions,
    $or: [{ supersededAt: null }, { supersededAt: { $gt: version } }],
  };
}

/** Response order: version, then id, so identical requests give identical bytes. */
export const RESPONSE_ORDER = { version: 1, itemId: 1 } as const;
