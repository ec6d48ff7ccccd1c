import { storageOperation } from '../lib/errors';

/**
 * The repository with each method's driver errors turned into AppError, as everywhere in
 * refsync-data-access (`storageOperation`: unreachable 503 with Retry-After, the rest 500).
 */
export function translatedMethods<R extends Record<string, (...args: never[]) => Promise<unknown>>>(
  repository: R,
): R {
  return Object.fromEntries(
    Object.entries(repository).map(([name, method]) => [
      name,
      (...args: never[]) => storageOperation(() => method(...args)),
    ]),
  ) as R;
}
