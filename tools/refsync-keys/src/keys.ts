import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_CLIENT_NAME } from '@nhp/refsync-contracts';

/** Client names as refsync-api accepts them in REFSYNC_API_KEYS (one definition, in the contracts). */
export const CLIENT_NAME = API_KEY_CLIENT_NAME;

/** A prefix makes a leaked key recognisable to secret scanners and to people. */
export const KEY_PREFIX = 'rsk_';

export interface GeneratedKey {
  client: string;
  /** The key to hand to the client. Shown once; never stored by the service. */
  key: string;
  /** SHA-256 (hex) of the key: what the service is configured with. */
  sha256: string;
  /** The `<client name>:<sha256>` entry for REFSYNC_API_KEYS. */
  entry: string;
}

/** 32 random bytes (256 bits), base64url: unguessable, and safe in a header and a shell. */
export function generateApiKey(client: string): GeneratedKey {
  if (!CLIENT_NAME.test(client)) {
    throw new RangeError(
      `client name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit; got ${JSON.stringify(client)}`,
    );
  }
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const sha256 = createHash('sha256').update(key, 'utf8').digest('hex');
  return { client, key, sha256, entry: `${client}:${sha256}` };
}
