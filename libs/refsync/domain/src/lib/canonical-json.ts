import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted recursively (by UTF-16 code unit, as Array#sort does) and no
 * whitespace; strings and numbers are serialised by JSON.stringify. For JSON values this is the
 * RFC 8785 (JCS) form. Hand-written because it is a dozen lines on the hot path of a 100k-item
 * diff, and it must treat `undefined` exactly as JSON.stringify does (property dropped, array slot
 * null) so the hash matches what is stored and served.
 */
export function canonicalJson(value: unknown): string {
  const out = serialise(value);
  if (out === undefined) throw new TypeError('canonicalJson: value is not representable as JSON');
  return out;
}

function serialise(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') throw new TypeError('canonicalJson: bigint is not JSON');
    return JSON.stringify(value);
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return serialise((value as { toJSON(): unknown }).toJSON());
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => serialise(v) ?? 'null').join(',')}]`;
  }
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const v = serialise((value as Record<string, unknown>)[key]);
    if (v !== undefined) parts.push(`${JSON.stringify(key)}:${v}`);
  }
  return `{${parts.join(',')}}`;
}

/** SHA-256 (hex) of the canonical JSON: equal for data that differs only in key order or whitespace. */
export function contentHash(data: unknown): string {
  return createHash('sha256').update(canonicalJson(data)).digest('hex');
}
