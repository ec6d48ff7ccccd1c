/** MongoDB's duplicate key error code (Server error codes: DuplicateKey, 11000). */
export const DUPLICATE_KEY = 11000;

export interface DuplicateKeyInfo {
  keyPattern: Record<string, unknown>;
  keyValue: Record<string, unknown>;
}

/**
 * Recognises a duplicate-key error from any write path (insert, update, findAndModify, bulk)
 * so repositories can turn it into a domain error instead of leaking a driver error.
 */
export function duplicateKeyInfo(err: unknown): DuplicateKeyInfo | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as {
    code?: unknown;
    keyPattern?: Record<string, unknown>;
    keyValue?: Record<string, unknown>;
    writeErrors?: Array<{
      code?: unknown;
      err?: { keyPattern?: Record<string, unknown>; keyValue?: Record<string, unknown> };
    }>;
  };
  if (e.code === DUPLICATE_KEY)
    return { keyPattern: e.keyPattern ?? {}, keyValue: e.keyValue ?? {} };
  const first = e.writeErrors?.find((w) => w.code === DUPLICATE_KEY);
  if (first)
    return { keyPattern: first.err?.keyPattern ?? {}, keyValue: first.err?.keyValue ?? {} };
  return undefined;
}
