/**
 * Mass-deletion guard: true when deleting `deletedCount` of `activeCount` active items exceeds
 * `maxShare` (0..1). An empty upstream file against a non-empty dataset has share 1, so it always
 * exceeds a share below 1. Nothing active means nothing to protect.
 */
export function exceedsDeletionShare(
  deletedCount: number,
  activeCount: number,
  maxShare: number,
): boolean {
  if (!(maxShare >= 0 && maxShare <= 1))
    throw new RangeError(`maxShare must be within 0..1, got ${maxShare}`);
  if (!Number.isInteger(deletedCount) || deletedCount < 0) {
    throw new RangeError(`deletedCount must be a non-negative integer, got ${deletedCount}`);
  }
  if (activeCount <= 0) return false;
  return deletedCount / activeCount > maxShare;
}

/** The share of active items a change set deletes, 0 when there is nothing active. */
export function deletionShare(deletedCount: number, activeCount: number): number {
  return activeCount <= 0 ? 0 : deletedCount / activeCount;
}
