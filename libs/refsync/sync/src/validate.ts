/**
 * One upstream record judged against the contracts: recognised as exactly what is committed (and
 * then not validated again), or validated, or rejected with the reasons an operator needs.
 */
import { itemDataSchemas, type Dataset } from '@nhp/refsync-contracts';
import { contentHash } from '@nhp/refsync-domain';
import type { LoadedRefs } from './committed-refs';
import type { UpstreamRecord } from './ports';
import type { InvalidItem } from './report';

export interface ValidItem {
  id: string;
  data: unknown;
  hash: string;
}

/** Validates one upstream record against the dataset's contract. */
export function validate(
  dataset: Dataset,
  record: UpstreamRecord,
): { ok: true; item: ValidItem } | { ok: false; bad: InvalidItem } {
  const claimedId =
    record.value !== null &&
    typeof record.value === 'object' &&
    typeof (record.value as { id?: unknown }).id === 'string'
      ? (record.value as { id: string }).id
      : undefined;
  const where = {
    dataset,
    index: record.index,
    ...(record.line !== undefined ? { line: record.line } : {}),
  };
  if (record.error !== undefined) return { ok: false, bad: { ...where, reasons: [record.error] } };
  const parsed = itemDataSchemas[dataset].safeParse(record.value);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) =>
      issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
    );
    return {
      ok: false,
      bad: { ...where, ...(claimedId !== undefined ? { id: claimedId } : {}), reasons },
    };
  }
  const data = parsed.data;
  return { ok: true, item: { id: data.id, data, hash: contentHash(data) } };
}

/**
 * The item, unparsed or unvalidated, when it is exactly what is committed; otherwise undefined
 * (validate it).
 *
 * First by sourceHash: an element whose bytes hash to the committed active state's sourceHash is
 * byte-for-byte the element that state was parsed from, so it is that item, unchanged, and is
 * neither decoded, parsed, validated nor canonicalised (the bulk of a nightly run). An element
 * whose bytes differ (or a source without byte hashes) is parsed, and when its content hash equals
 * its committed, active hash it is unchanged too (reformatted upstream, say) and skips the zod pass.
 *
 * Decision: skipping validation cannot accept anything invalid, since equal bytes or equal hashes
 * mean the exact content that passed the contract when it was committed (and the contracts only
 * check, they do not transform). Every new, changed or reappearing item is still validated, and
 * every item still takes part in duplicate-id detection. A release that makes a contract stricter
 * must not rely on this for old items: it needs a run against an empty committed state, or a data
 * migration.
 */
export function unchangedItem(
  record: UpstreamRecord,
  refs: LoadedRefs,
): { ok: true; item: ValidItem } | undefined {
  // (Without committed sourceHashes, e.g. on the initial import, the bytes are not even hashed.)
  const sourceHash = refs.bySourceHash.size > 0 ? record.sourceHash : undefined;
  if (sourceHash !== undefined) {
    const same = refs.bySourceHash.get(sourceHash);
    if (same) return { ok: true, item: { id: same.id, data: undefined, hash: same.hash } };
  }
  if (record.error !== undefined || record.value === null || typeof record.value !== 'object')
    return undefined;
  const id = (record.value as { id?: unknown }).id;
  if (typeof id !== 'string') return undefined;
  const committed = refs.byId.get(id);
  if (!committed || committed.isDeleted) return undefined;
  const hash = contentHash(record.value);
  if (hash !== committed.hash) return undefined;
  return { ok: true, item: { id, data: record.value, hash } };
}
