import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { API_KEY_CLIENT_NAME, API_KEY_SHA256_HEX } from '@nhp/refsync-contracts';

/** The request header that carries the key. */
export const API_KEY_HEADER = 'x-api-key';

/** Accepted when no key is configured outside production, and announced in the start log. */
export const LOCAL_DEV_KEY = 'local-dev-key';
export const LOCAL_DEV_CLIENT = 'local-dev';

/** One configured key: the client it belongs to (for logs) and only the SHA-256 of the key. */
export interface ApiKeyEntry {
  client: string;
  sha256: Buffer;
}

/** Keys the tool generates are 43 characters; anything far longer is not a key, so not hashed. */
const MAX_PRESENTED_KEY_LENGTH = 512;

export function sha256Hex(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export type ParsedApiKeys = { ok: true; keys: ApiKeyEntry[] } | { ok: false; problems: string[] };

/**
 * Parses REFSYNC_API_KEYS: comma-separated `<client name>:<sha256 hex of the key>`. Whitespace and
 * empty entries (a trailing comma) are ignored. A client may hold several keys (rotation), but one
 * hash cannot belong to two clients. Problems name the entry by position, never its content.
 */
export function parseApiKeys(raw: string | undefined): ParsedApiKeys {
  const keys: ApiKeyEntry[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const entries = (raw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  entries.forEach((entry, index) => {
    const position = `entry ${index + 1}`;
    const colon = entry.lastIndexOf(':');
    const client = colon > 0 ? entry.slice(0, colon).trim() : '';
    const hash = colon > 0 ? entry.slice(colon + 1).trim() : '';
    if (!API_KEY_CLIENT_NAME.test(client) || !API_KEY_SHA256_HEX.test(hash)) {
      problems.push(
        `${position}: expected <client name>:<sha256 hex of the key> (client name: letters, digits, ".", "_", "-"; hash: 64 hex digits; run npm run refsync-keys -- <client name>)`,
      );
      return;
    }
    const normalised = hash.toLowerCase();
    const owner = seen.get(normalised);
    if (owner !== undefined) {
      problems.push(`${position}: the same key is already configured for client "${owner}"`);
      return;
    }
    seen.set(normalised, client);
    keys.push({ client, sha256: Buffer.from(normalised, 'hex') });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, keys };
}

export interface ApiKeyVerifier {
  /** The client name of a valid key, undefined for a missing, malformed or unknown one. */
  verify(presented: string | string[] | undefined): string | undefined;
  /** Client names, for the start log. */
  readonly clients: readonly string[];
}

/**
 * Compares the SHA-256 of the presented key with every configured hash in constant time. Hashing
 * first gives equal-length inputs to timingSafeEqual and means no plain key is held in memory
 * beyond the request; looping over all entries keeps the time independent of which one matched.
 */
export function createApiKeyVerifier(entries: readonly ApiKeyEntry[]): ApiKeyVerifier {
  const configured = entries.map((e) => ({ client: e.client, sha256: Buffer.from(e.sha256) }));
  return {
    clients: [...new Set(configured.map((e) => e.client))],
    verify(presented) {
      if (typeof presented !== 'string') return undefined;
      if (presented.length === 0 || presented.length > MAX_PRESENTED_KEY_LENGTH) return undefined;
      // One-shot hash: a third of createHash's cost, and this runs on every request.
      const digest = hash('sha256', presented, 'buffer');
      let match: string | undefined;
      for (const entry of configured) {
        if (timingSafeEqual(digest, entry.sha256) && match === undefined) match = entry.client;
      }
      return match;
    },
  };
}

/** The development fallback: the well-known key under the client name "local-dev". */
export function localDevKeys(): ApiKeyEntry[] {
  return [{ client: LOCAL_DEV_CLIENT, sha256: Buffer.from(sha256Hex(LOCAL_DEV_KEY), 'hex') }];
}
