/** Who makes a write and in which request (the domain's type: its use cases make them). */
export type { AuditContext } from '@nhp/privacy-domain';

/** How long repositories trust what they read into memory (see each repository's cache). */
export const DEFAULT_CACHE_TTL_MS = 5000;

/**
 * The timing options of a repository's lru-cache for entries trusted `ttlMs`. The cache reads the
 * clock at most every fiftieth of the TTL (lru-cache's `ttlResolution`): with its default, every
 * millisecond, a busy server arms a timer each millisecond to forget the time it read, a
 * precision no TTL of seconds needs. An entry may so be served up to 2% of its TTL late.
 */
export function cacheTiming(ttlMs: number): { ttl: number; ttlResolution: number } {
  return { ttl: ttlMs, ttlResolution: Math.max(1, Math.floor(ttlMs / 50)) };
}
