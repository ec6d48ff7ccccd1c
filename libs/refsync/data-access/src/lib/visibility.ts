import type { Dataset } from '@nhp/refsync-contracts';
import type { ItemState } from './models';

/**
 * How far above the reader's version V a diff looks for head documents whose `prev` holds the state
 * at V: V+1 is a staging under way (or a commit that happened after the reader fixed V), V+2 the
 * next run's staging after such a commit. Further is two commits during one query, outside the
 * supported window (see README, "Readers").
 */
export const STAGING_LOOKAHEAD = 2;

/**
 * The state of a head document visible at committed version V: its top-level state when that was
 * committed by V, else the state it replaced (`prev`), which a staging run keeps exactly for readers
 * at V. `undefined`: the item did not exist at V. `'lost'`: `prev` is newer than V too, i.e. two
 * runs staged since V (a reader far behind, racing two runs): the state at V is gone.
 */
export function visibleState(
  doc: ItemState & { prev?: ItemState | null },
  version: number,
): ItemState | undefined | 'lost' {
  if (doc.version <= version) return doc;
  if (!doc.prev) return undefined;
  return doc.prev.version <= version ? doc.prev : 'lost';
}

/**
 * Candidates of the full list at V: non-deleted committed states (index-driven on MongoDB, in
 * response order), plus the head documents of a staging under way, whose `prev` may hold a state
 * visible at V (few: only the items a run is changing; filtered by visibleState).
 */
export function fullListAt(dataset: Dataset, version: number) {
  return {
    dataset,
    $or: [
      { dataset, isDeleted: false, version: { $lte: version } },
      { dataset, version: { $gt: version }, prev: { $ne: null } },
    ],
  };
}

/**
 * Up to this many versions, the diff lists them explicitly. Beyond it (a client years behind) the
 * answer is close to a full list anyway, and a range is the cheaper query.
 */
export const MAX_DIFF_VERSIONS_AS_LIST = 1000;

/**
 * Candidates of the diff since N at V: head documents whose top-level version is in (N, V], plus
 * those of a staging above V whose `prev` was written after N. Versions are dense integers, so
 * (N, V + STAGING_LOOKAHEAD] is a finite set; as an $in of point lookups it uses
 * {dataset, version, itemId} on any engine (the project's server uses an index when equality or
 * $in pins a prefix of it).
 */
export function changedSinceAt(dataset: Dataset, since: number, version: number) {
  const upTo = version + STAGING_LOOKAHEAD;
  const count = upTo - since;
  const versions =
    count <= MAX_DIFF_VERSIONS_AS_LIST
      ? { $in: Array.from({ length: count }, (_, i) => since + 1 + i) }
      : { $gt: since, $lte: upTo };
  return {
    dataset,
    version: versions,
    $or: [{ version: { $lte: version } }, { 'prev.version': { $gt: since } }],
  };
}

/**
 * Response order: version, then id, so identical requests give identical bytes (in memory:
 * compareResponseOrder of @nhp/refsync-domain).
 */
export const RESPONSE_ORDER = { version: 1, itemId: 1 } as const;
