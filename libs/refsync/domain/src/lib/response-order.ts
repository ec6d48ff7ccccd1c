/**
 * Response order ("ordered by version, then id", see the selection rules) in memory, identical to
 * MongoDB's sort on {version, itemId} (simple collation: strings compare by their UTF-8 bytes,
 * which JavaScript's `<` on UTF-16 does not always match). Storage sorts by it and the read side
 * splices late items in by it, so both agree on every byte of a response.
 */
export function compareResponseOrder(
  a: { version: number; itemId: string },
  b: { version: number; itemId: string },
): number {
  if (a.version !== b.version) return a.version - b.version;
  return Buffer.compare(Buffer.from(a.itemId, 'utf8'), Buffer.from(b.itemId, 'utf8'));
}
