const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const BASE10_INTEGER = /^-?\d+$/;

export type SinceVersionResult =
  { ok: true; value: bigint | undefined } | { ok: false; reason: string };

/**
 * Parses a raw `sinceVersion` / `since-version` query value by "the version parameter" rule
 * (README, "Selection rules"): a base-10
 * integer within the signed 64-bit range with an optional leading `-`, nothing else. `raw` is what
 * the HTTP layer's query parser produced: undefined when absent, a string when given once, an array
 * when given twice, an object for bracket syntax. A bigint keeps every long exact.
 */
export function parseSinceVersion(raw: unknown): SinceVersionResult {
  if (raw === undefined) return { ok: true, value: undefined };
  if (Array.isArray(raw)) return { ok: false, reason: 'must be given at most once' };
  if (typeof raw !== 'string') return { ok: false, reason: 'must be a single base-10 integer' };
  if (raw === '') return { ok: false, reason: 'must not be empty' };
  if (!BASE10_INTEGER.test(raw)) {
    return { ok: false, reason: 'must be a base-10 integer (digits with an optional leading "-")' };
  }
  const value = BigInt(raw);
  if (value < INT64_MIN || value > INT64_MAX) {
    return { ok: false, reason: 'must be within the signed 64-bit integer range' };
  }
  return { ok: true, value };
}

/**
 * The version a parsed sinceVersion selects changes above. A negative long is below every item
 * version, so it behaves as 0 (R3). Item versions are safe integers, so a long above
 * Number.MAX_SAFE_INTEGER is clamped there: still above every version, still R4.
 */
export function effectiveSince(value: bigint): number;
export function effectiveSince(value: undefined): undefined;
export function effectiveSince(value: bigint | undefined): number | undefined;
export function effectiveSince(value: bigint | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value < 0n) return 0;
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) return Number.MAX_SAFE_INTEGER;
  return Number(value);
}
