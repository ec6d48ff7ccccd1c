import type { Logger } from '@nhp/shared-logger';
import {
  announceInvalidation,
  listenForInvalidations,
  type NatsConnection,
  type Subscription,
} from '@nhp/shared-messaging';

/**
 * The internal subject on which privacy-api instances (and the admin tool) announce a changed
 * grant or definition, so that every instance drops its cached copy within a second instead of
 * trusting it for the cache's time-to-live. Outside `privacy.events.>`: no stream keeps these.
 */
export const PRIVACY_CACHE_SUBJECT = 'privacy.internal.cache-invalidated';

export type CachedKind = 'grant' | 'definition';

/** `onChanged` for a repository: announces each changed key of `kind` (never throws). */
export function announceChanges(
  nats: () => NatsConnection | undefined,
  kind: CachedKind,
  logger?: Logger,
): (key: string) => void {
  return (key) => announceInvalidation(nats(), PRIVACY_CACHE_SUBJECT, { kind, key }, logger);
}

/** Drops the cached grant or definition each announcement names. */
export function followCacheInvalidations(
  nc: NatsConnection,
  caches: { grants: { forget(key: string): void }; definitions: { forget(key: string): void } },
  logger?: Logger,
): Subscription {
  return listenForInvalidations(
    nc,
    PRIVACY_CACHE_SUBJECT,
    ({ kind, key }) => {
      if (kind === 'grant') caches.grants.forget(key);
      else if (kind === 'definition') caches.definitions.forget(key);
    },
    logger,
  );
}
