import type { JWTPayload } from 'jose';

/** A token that verified but whose claims are not of the shape we need. */
export class ClaimError extends Error {}

/** The `scope` claim: a JSON array of strings or a space-separated string. */
export function scopesOf(claim: unknown): Set<string> {
  if (claim === undefined) return new Set();
  if (typeof claim === 'string') return new Set(claim.split(' ').filter(Boolean));
  if (Array.isArray(claim) && claim.every((s) => typeof s === 'string')) return new Set(claim);
  throw new ClaimError('scope is neither a JSON array of strings nor a space-separated string');
}

const UNPAIRED_SURROGATE = /\p{Cs}/u;

export function optionalString(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) {
    throw new ClaimError(`${name} is not a non-empty string`);
  }
  // A JSON escape of half a surrogate pair is not text: client_id is URI-encoded into grant keys
  // (encodeURIComponent throws on it), so such a claim is malformed, not a server error.
  if (UNPAIRED_SURROGATE.test(value)) throw new ClaimError(`${name} is not text`);
  return value;
}

/** `cnf.jkt`: the DPoP key the token is bound to, if any. */
export function jktOf(payload: JWTPayload): string | undefined {
  const cnf = payload['cnf'];
  if (cnf === undefined) return undefined;
  const jkt = (cnf as { jkt?: unknown } | null)?.jkt;
  if (typeof cnf !== 'object' || cnf === null || (jkt !== undefined && typeof jkt !== 'string')) {
    throw new ClaimError('cnf is malformed');
  }
  return jkt as string | undefined;
}
