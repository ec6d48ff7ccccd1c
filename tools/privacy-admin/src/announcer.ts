import { errors, type NatsConnection } from '@nats-io/transport-node';
import type { ResolvedUrl } from '@nhp/shared-config';
import {
  DEFAULT_CACHE_TTL_MS,
  PRIVACY_CACHE_SUBJECT,
  type CachedKind,
} from '@nhp/privacy-data-access';

/** How long an announcement waits to learn whether anyone heard it (see announce()). */
const HEARD_WAIT_MS = 300;

type Outcome = 'heard' | 'no-listener' | 'not-sent';

/**
 * Tells running privacy-api instances that a grant or definition changed, so that they drop their
 * cached copy at once, and says loudly when that did not happen: privacy-api keeps what it read
 * for DEFAULT_CACHE_TTL_MS, so a change nobody heard of is answered the old way until then. The
 * classic miss is a NATS other than the stack's (the default `nats://127.0.0.1:4222` while
 * `npm start` runs NATS on a free port): the publish succeeds and no instance hears it.
 *
 * Each announcement is therefore sent as a NATS request: privacy-api's subscription handles it as
 * any announcement (it does not reply), and the server answers "no responders" at once when no
 * instance subscribes on this NATS. Silence until HEARD_WAIT_MS means someone received it.
 */
export function createAnnouncer(nats: NatsConnection | undefined, natsUrl: ResolvedUrl) {
  const sent: Array<Promise<Outcome>> = [];

  async function announce(kind: CachedKind, key: string): Promise<Outcome> {
    if (!nats || nats.isClosed()) return 'not-sent';
    try {
      await nats.request(PRIVACY_CACHE_SUBJECT, JSON.stringify({ kind, key }), {
        timeout: HEARD_WAIT_MS,
      });
      return 'heard';
    } catch (err) {
      if (err instanceof errors.RequestError && err.isNoResponders()) return 'no-listener';
      if (err instanceof errors.TimeoutError) return 'heard';
      return 'not-sent';
    }
  }

  return {
    /** `onChanged` for a repository. */
    onChanged(kind: CachedKind): (key: string) => void {
      return (key) => {
        sent.push(announce(kind, key));
      };
    },

    /** After the command: a warning when a change was made that running instances may not know. */
    async warnings(): Promise<string[]> {
      const outcomes = await Promise.all(sent);
      if (outcomes.length === 0) return [];
      const ttl = `${DEFAULT_CACHE_TTL_MS / 1000} s`;
      const where = `NATS at ${natsUrl.url} (from ${natsUrl.from})`;
      if (outcomes.includes('not-sent')) {
        return [
          `warning: could not reach ${where}, so running privacy-api instances were not told of this change: each may answer the old way for up to ${ttl}.`,
          'Set NATS_URL to the NATS privacy-api uses (npm start sets it for you while it runs).',
        ];
      }
      if (outcomes.includes('no-listener')) {
        return [
          `warning: no privacy-api listens on ${where}: one that runs against another NATS was not told of this change and may answer the old way for up to ${ttl}.`,
          'Set NATS_URL to the NATS privacy-api uses (npm start sets it for you while it runs).',
        ];
      }
      return [];
    },
  };
}
