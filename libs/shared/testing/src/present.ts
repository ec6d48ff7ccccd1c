/**
 * The value, or a failure that names what was missing. For tests and tools where a value must be
 * there (a stored document, a known template): a non-null assertion (`!`) only assumes it, and a
 * missing value then fails later as an unrelated TypeError.
 */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) {
    throw new Error(`expected ${what}, found ${String(value)}`);
  }
  return value;
}
