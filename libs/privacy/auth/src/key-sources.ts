import { readFileSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from 'jose';
import type { Logger } from '@nhp/shared-logger';

/** Where the identity provider's signing keys come from. */
export type JwksSource =
  /** The identity provider's JWKS endpoint: cached, refetched on an unknown `kid` (at most once per cooldown). */
  | { url: string; cooldownMs?: number; cacheMaxAgeMs?: number; timeoutMs?: number }
  /** A JWKS document on disk, read at start and re-read when it changes (see fileKeyGetter). */
  | { file: string }
  | { keys: JSONWebKeySet };

function readJwksFile(file: string): JSONWebKeySet {
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(readFileSync(file, 'utf8')) as JSONWebKeySet;
  } catch (err) {
    throw new Error(`privacy-auth: cannot read the JWKS file ${file}: ${(err as Error).message}`);
  }
  if (!Array.isArray(jwks?.keys)) {
    throw new Error(`privacy-auth: ${file} is not a JWKS document (no "keys" array)`);
  }
  return jwks;
}

/**
 * A key set read from a file at start (a missing or malformed file throws there, a start-up
 * error). When a token names a key the set does not have, the file is looked at again: if it
 * changed since it was read, it is re-read, so keys rotate by replacing the file (e.g. a mounted
 * secret) without a restart. A replacement that cannot be read keeps the keys in use, with a
 * warning. The check is a stat, made only for unknown keys.
 */
function fileKeyGetter(file: string, log: Logger | undefined): JWTVerifyGetKey {
  let current = createLocalJWKSet(readJwksFile(file));
  let readAtMtime = statSync(file).mtimeMs;
  return async (header, token) => {
    try {
      return await current(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey)) throw err;
      let mtime: number;
      try {
        mtime = (await stat(file)).mtimeMs;
      } catch {
        throw err;
      }
      if (mtime === readAtMtime) throw err;
      try {
        current = createLocalJWKSet(readJwksFile(file));
        readAtMtime = mtime;
        log?.info({ file }, 'the JWKS file changed: keys reloaded');
      } catch (reloadError) {
        log?.warn(
          { file, reason: (reloadError as Error).message },
          'the changed JWKS file cannot be used; keeping the keys in use',
        );
        throw err;
      }
      return current(header, token);
    }
  };
}

/** The key lookup jose's jwtVerify calls for each token, over the configured source. */
export function keyGetter(source: JwksSource, log: Logger | undefined): JWTVerifyGetKey {
  if ('url' in source) {
    // jose caches the set, refetches it on an unknown kid no more often than the cooldown, and
    // refreshes it after cacheMaxAge: exactly what an identity provider's rotation needs.
    return createRemoteJWKSet(new URL(source.url), {
      cooldownDuration: source.cooldownMs ?? 30_000,
      cacheMaxAge: source.cacheMaxAgeMs ?? 600_000,
      timeoutDuration: source.timeoutMs ?? 5_000,
    });
  }
  if ('file' in source) return fileKeyGetter(source.file, log);
  return createLocalJWKSet(source.keys);
}

/**
 * jose's remote key set fails with fetch's own TypeError (connection refused, DNS), a generic
 * JOSEError for a non-200 or non-JSON answer, or JWKSInvalid for a body that is no key set. Any
 * other error is a verdict on the token (when in doubt: 401, never a 500 a client could provoke).
 */
export function isJwksFetchFailure(err: unknown): boolean {
  if (err instanceof joseErrors.JWKSTimeout) return true;
  if (err instanceof joseErrors.JOSEError) {
    return err.code === 'ERR_JOSE_GENERIC' || err.code === 'ERR_JWKS_INVALID';
  }
  // By name: fetch's TypeError may come from another realm (test runners), where instanceof fails.
  return (err as Error | null)?.name === 'TypeError' && (err as Error).message === 'fetch failed';
}
