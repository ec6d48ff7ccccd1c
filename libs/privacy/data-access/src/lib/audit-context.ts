/** Who makes a write and in which request (the domain's type: its use cases make them). */
export type { AuditContext } from '@nhp/privacy-domain';

/** How long repositories trust what they read into memory (see each repository's cache). */
export const DEFAULT_CACHE_TTL_MS = 5000;
