import type { ListedItem, Spelling } from '../datasets';

/**
 * Serialises one envelope in the field order of refsync-service.md. Called once per cache key:
 * the hot path only ever writes the resulting bytes.
 */
export function renderEnvelope(
  spelling: Spelling,
  currentVersion: number,
  items: readonly ListedItem[],
): Buffer {
  const envelope =
    spelling === 'primary'
      ? {
          currentVersion,
          items: items.map((item) => ({
            data: item.data,
            version: item.version,
            lastChanged: item.lastChanged.toISOString(),
            isDeleted: item.isDeleted,
          })),
        }
      : {
          currentVersion,
          entries: items.map((item) => ({ data: item.data, isDeleted: item.isDeleted })),
        };
  return Buffer.from(JSON.stringify(envelope), 'utf8');
}

/** Rules 4 and 6: nothing above the version asked for, so no query is needed. */
export function renderEmptyEnvelope(spelling: Spelling, currentVersion: number): Buffer {
  return renderEnvelope(spelling, currentVersion, []);
}
