import type { AuditActor } from './journal';

/** Who makes a write and in which request: what the repositories put in its audit record. */
export interface AuditContext {
  actor: AuditActor;
  requestId?: string;
}

/** How long repositories trust what they read into memory (see each repository's cache). */
export const DEFAULT_CACHE_TTL_MS = 5000;
