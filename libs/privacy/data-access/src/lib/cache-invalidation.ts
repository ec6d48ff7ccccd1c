import type { Logger } from '@nhp/shared-logger';
import {
  announceInvalidation,
  listenForInvalidations,
  onNatsReconnect,
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

interface ForgettingCache {
  forget(key: string): void;
  clearCache(): void;
}

/**
 * Drops the cached grant or definition each announcement names. Announcements made while this
 * instance was disconnected from NATS are lost, so on each reconnect both caches are emptied.
 */
export function followCacheInvalidations(
  nc: NatsConnection,
  caches: { grants: ForgettingCache; definitions: ForgettingCache },
  logger?: Logger,
): Subscription {
  onNatsReconnect(nc, () => {
    caches.grants.clearCache();
    caches.definitions.clearCache();
  });
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
