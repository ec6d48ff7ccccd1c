import { createHash } from 'node:crypto';
import { base64url, calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import { LRUCache } from 'lru-cache';
import { ACCEPTED_ALGS } from './errors';

/**
 * DPoP proofs (RFC 9449 §4.3): `typ` dpop+jwt, an accepted asymmetric algorithm, the public key in
 * the `jwk` header (jose's EmbeddedJWK refuses private key material), a signature by that key, and
 * the claims `jti`, `htm`, `htu`, `iat` and `ath`. The proof's key must be the one the access token
 * is bound to (`cnf.jkt`). No server nonces: the `iat` window plus the `jti` cache bound replay.
 *
 * `htu` is compared without query and fragment (existing clients sign the bare URL): scheme and
 * host case-insensitively with default ports dropped, the path exactly, both after WHATWG URL
 * normalisation. The server side is the URL as the client addressed it: scheme and host as Express
 * derives them (`req.protocol`, `req.host`: X-Forwarded-Proto / X-Forwarded-Host only when the app
 * trusts the proxy) and the full original path including any base path. A gateway that rewrites the
 * path before it reaches us breaks this; the national gateway forwards the path as called, which is
 * why PRIVACY_API_BASE_PATH exists.
 */

export class ProofError extends Error {
  override readonly name = 'ProofError';
}

export interface DpopOptions {
  /** How far `iat` may be from now, either way (seconds). Default 60. */
  iatWindowSec?: number;
  /** Most `jti`s remembered. Default 100 000. */
  replayCacheSize?: number;
}

export interface ProofInput {
  proof: string;
  method: string;
  /** The URL the request was sent to, as the client addressed it. */
  requestUrl: string;
  accessToken: string;
  /** The access token's `cnf.jkt`. */
  jkt: string;
  nowMs: number;
}

/** `origin + path` of an absolute http(s) URL, or undefined when it is not one. */
export function htuOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

export function createDpopVerifier(options: DpopOptions = {}) {
  const windowMs = (options.iatWindowSec ?? 60) * 1000;
  // jti → until when it is remembered. Bounded: a flood of valid proofs evicts the oldest entries
  // first, so the size must exceed the proofs accepted within 2 × the window (100 000 covers about
  // 800 requests a second at the default window).
  const seen = new LRUCache<string, number>({ max: options.replayCacheSize ?? 100_000 });

  return async function verifyProof(input: ProofInput): Promise<void> {
    let payload: Record<string, unknown>;
    let jwk: JWK | undefined;
    try {
      const verified = await jwtVerify(input.proof, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: [...ACCEPTED_ALGS],
        currentDate: new Date(input.nowMs),
      });
      payload = verified.payload as Record<string, unknown>;
      jwk = verified.protectedHeader.jwk;
    } catch {
      throw new ProofError('The DPoP proof is malformed or its signature is invalid');
    }
    if (!jwk) throw new ProofError('The DPoP proof carries no jwk header');

    const { jti, htm, htu, iat, ath } = payload;
    if (!isNonEmptyString(jti) || jti.length > 256) {
      throw new ProofError('The DPoP proof has no valid jti');
    }
    if (htm !== input.method) throw new ProofError('The DPoP proof htm does not match the method');
    const expected = htuOf(input.requestUrl);
    if (!isNonEmptyString(htu) || expected === undefined || htuOf(htu) !== expected) {
      throw new ProofError('The DPoP proof htu does not match the request URL');
    }
    if (typeof iat !== 'number' || Math.abs(input.nowMs - iat * 1000) > windowMs) {
      throw new ProofError('The DPoP proof iat is outside the accepted window');
    }
    const expectedAth = base64url.encode(
      createHash('sha256').update(input.accessToken, 'ascii').digest(),
    );
    if (ath !== expectedAth) {
      throw new ProofError('The DPoP proof ath does not match the access token');
    }
    if ((await calculateJwkThumbprint(jwk, 'sha256')) !== input.jkt) {
      throw new ProofError('The DPoP proof is not signed by the key the access token is bound to');
    }

    // Last, so that only proofs that passed every other check occupy the cache.
    const key = `${input.jkt}:${jti}`;
    const until = seen.get(key);
    if (until !== undefined && until > input.nowMs) {
      throw new ProofError('The DPoP proof has been used before');
    }
    // A proof stays acceptable while its iat is within the window, so its jti is remembered as long.
    seen.set(key, iat * 1000 + windowMs);
  };
}
