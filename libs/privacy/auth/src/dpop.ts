import {
  checkPrimeSync,
  constants,
  createHash,
  hash,
  createPublicKey,
  verify as verifySignature,
  type KeyObject,
} from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ACCEPTED_ALGS } from './errors';
import { ReplayShares, ReplayTable } from './replay-table';

/**
 * DPoP proofs (RFC 9449 §4.3): `typ` dpop+jwt, an accepted asymmetric algorithm, the public key in
 * the `jwk` header (no private key material), a signature by that key, and the claims `jti`,
 * `htm`, `htu`, `iat` and `ath`. The proof's key must be the one the access token is bound to
 * (`cnf.jkt`). No server nonces: the `iat` window plus the `jti` cache bound replay.
 *
 * `htu` is compared without query and fragment (existing clients sign the bare URL): scheme and
 * host case-insensitively with default ports dropped, the path exactly, both after WHATWG URL
 * normalisation. The server side is the URL as the client addressed it: scheme and host as Express
 * derives them (`req.protocol`, `req.host`: X-Forwarded-Proto / X-Forwarded-Host only when the app
 * trusts the proxy) and the full original path including any base path. A gateway that rewrites the
 * path before it reaches us breaks this; the national gateway forwards the path as called, which is
 * why PRIVACY_API_BASE_PATH exists.
 *
 * Why the proof's JWS is checked here with node:crypto rather than with jose (the access token
 * still goes through jose's jwtVerify, and is cached by its hash): a proof is new on every request
 * and jose's `jwtVerify` with `EmbeddedJWK` imports the embedded key into WebCrypto and verifies
 * asynchronously each time, while a `KeyObject` kept per key is imported once (the figures:
 * tools/bench/README.md). The signature itself, the one expensive step, is checked on libuv's
 * thread pool (`crypto.verify` with a callback), so that it runs beside the event loop where a
 * second core is free; the jti is looked up and remembered in one turn after it, so copies of one
 * proof checked at once cannot both pass.
 * The checks jose made on the way are all made below: compact form with base64url parts, JSON object
 * header and claims, no `crit` (no extension is understood), `typ` compared as jose does
 * (case-insensitive, optional `application/` prefix), `alg` on the allow-list, the `jwk` header a
 * public key of the algorithm's type (`use` sig and `alg` equal when present, `key_ops` allowing
 * verify; RSA keys further held to the rules of acceptableRsaKey, below), and `iat`, `exp`, `nbf` numeric with `exp` and `nbf` honoured.
 */

export class ProofError extends Error {
  override readonly name = 'ProofError';

  /** A replay: the proof passed every other check, but its jti was seen before. */
  constructor(
    message: string,
    readonly replay = false,
  ) {
    super(message);
  }
}

/**
 * The replay check cannot be made (the shared replay store cannot be asked, or the local replay
 * table is full): the proof can be neither accepted nor refused.
 */
export class ReplayStoreUnavailableError extends Error {
  override readonly name = 'ReplayStoreUnavailableError';
}

/**
 * The proof's key has its share of the replay table in use (see ReplayShares): this key's proofs
 * are refused for `retryAfterSec`, every other key's still pass.
 */
export class ReplayShareExceededError extends Error {
  override readonly name = 'ReplayShareExceededError';

  constructor(readonly retryAfterSec: number) {
    super(`this DPoP key has its share of the replay table in use; retry after ${retryAfterSec} s`);
  }
}

/** A key's share of the replay table by default: an eighth of what it holds. */
export const DEFAULT_REPLAY_SHARE = 1 / 8;

/**
 * Proofs' jtis shared by every instance behind a load balancer (PRIVACY_DPOP_REPLAY_STORE=nats):
 * `claim` answers true for the first claim of a key within the proof window, false after.
 */
export interface SharedReplayStore {
  claim(key: string): Promise<boolean>;
}

export interface DpopOptions {
  /** How far `iat` may be from now, either way (seconds). Default 60. */
  iatWindowSec?: number;
  /**
   * Bytes for the `jti`s of accepted proofs (16 a proof, up to three quarters full: see
   * replay-table.ts). Default 8 MiB: about 390 000 proofs within their windows, 6,500 a second at
   * the default window. When it is full, new proofs are refused (503-class) until entries expire;
   * a live entry is never dropped.
   */
  replayCacheBytes?: number;
  /**
   * The share of the replay table one DPoP key may use (see ReplayShares). Default 1/8: at 8 MiB,
   * 45 000 live proofs, 375 a second sustained per key at the default window. 1 (or more): no
   * share, one key may fill the table.
   */
  replayShare?: number;
  /** Bytes for checked proof headers with their imported public keys. Default 2 MiB (about 800 keys). */
  keyCacheBytes?: number;
  /**
   * Asked after the local cache, for proofs no instance may accept twice. Without it a proof is
   * refused as a replay only by the instance that saw it (one instance: enough).
   */
  sharedReplayStore?: SharedReplayStore;
}

export interface ProofInput {
  proof: string;
  method: string;
  /** The URL the request was sent to, as the client addressed it. */
  requestUrl: string;
  accessToken: string;
  /** base64url(SHA-256(accessToken)) when the caller has it already (it keys the token cache). */
  accessTokenHash?: string;
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

type Alg = (typeof ACCEPTED_ALGS)[number];

/** How each accepted algorithm verifies: key type, and node:crypto's verify options. */
const ALGORITHMS: Record<Alg, { kty: 'EC' | 'RSA'; crv?: string }> = {
  ES256: { kty: 'EC', crv: 'P-256' },
  RS256: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
};
const isAcceptedAlg = (alg: unknown): alg is Alg =>
  typeof alg === 'string' && Object.hasOwn(ALGORITHMS, alg);

/** JWK members that only a private (or symmetric) key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'];
const BASE64URL = /^[A-Za-z0-9_-]+$/;

const malformed = () => new ProofError('The DPoP proof is malformed or its signature is invalid');

function decodeJsonObject(part: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed();
  return value as Record<string, unknown>;
}

/** jose's typ comparison: case-insensitive, `application/` optional. */
function normalizeTyp(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

/**
 * The public key in the `jwk` header, checked for the algorithm, with its RFC 7638 thumbprint
 * (required members only, lexicographic order, SHA-256, base64url: as jose's
 * calculateJwkThumbprint).
 */
function checkedJwk(
  jwk: unknown,
  alg: Alg,
): { thumbprint: string; members: Record<string, string> } {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new ProofError('The DPoP proof carries no jwk header');
  }
  const k = jwk as Record<string, unknown>;
  const expected = ALGORITHMS[alg];
  if (k['kty'] !== expected.kty) throw malformed();
  for (const name of PRIVATE_MEMBERS) if (k[name] !== undefined) throw malformed();
  if (k['use'] !== undefined && k['use'] !== 'sig') throw malformed();
  if (k['alg'] !== undefined && k['alg'] !== alg) throw malformed();
  if (k['ext'] !== undefined && typeof k['ext'] !== 'boolean') throw malformed();
  const ops = k['key_ops'];
  if (
    ops !== undefined &&
    (!Array.isArray(ops) ||
      ops.some((op) => typeof op !== 'string') ||
      new Set(ops).size !== ops.length ||
      !ops.includes('verify'))
  ) {
    throw malformed();
  }
  let members: Record<string, string>;
  if (expected.kty === 'EC') {
    const { crv, x, y } = k;
    if (typeof crv !== 'string' || crv !== expected.crv) throw malformed();
    if (!isNonEmptyString(x) || !isNonEmptyString(y)) throw malformed();
    members = { crv, kty: 'EC', x, y };
  } else {
    const { e, n } = k;
    if (!isNonEmptyString(e) || !isNonEmptyString(n)) throw malformed();
    members = { e, kty: 'RSA', n };
  }
  const thumbprint = createHash('sha256').update(JSON.stringify(members)).digest('base64url');
  return { thumbprint, members };
}

/** RSA keys a proof may carry: modulus bits (jose's floor; the ceiling bounds the work a proof costs). */
export const RSA_MODULUS_BITS = { min: 2048, max: 8192 } as const;
/** The one RSA public exponent accepted: what every library makes (F4), and no weak one (1, 3). */
export const RSA_PUBLIC_EXPONENT = 65537n;

/**
 * The product of the odd primes below 752: a modulus sharing a factor with it has a small factor
 * (NIST SP 800-89 §5.3.3, partial public-key validation of an RSA modulus).
 */
const SMALL_PRIMES_PRODUCT = (() => {
  let product = 1n;
  for (let candidate = 3; candidate < 752; candidate += 2) {
    let prime = true;
    for (let d = 3; d * d <= candidate; d += 2) if (candidate % d === 0) prime = false;
    if (prime) product *= BigInt(candidate);
  }
  return product;
})();

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/**
 * Whether an RSA public key is one a private key can stand behind (partial validation, NIST SP
 * 800-89 §5.3.3): the exponent 65537, a modulus of 2048-8192 bits that is odd, not a prime and
 * without small factors. A key with `e` = 1 makes its "signature" the padded hash itself, so anyone
 * holding a token bound to it could make its proofs; a prime or easily factored modulus gives away
 * the private exponent alike. node:crypto imports any such key, so the rules are checked here (the
 * primality test is OpenSSL's, through checkPrimeSync).
 */
function acceptableRsaKey(key: KeyObject, modulus: string): boolean {
  const details = key.asymmetricKeyDetails;
  const bits = details?.modulusLength ?? 0;
  if (bits < RSA_MODULUS_BITS.min || bits > RSA_MODULUS_BITS.max) return false;
  if (details?.publicExponent !== RSA_PUBLIC_EXPONENT) return false;
  const n = Buffer.from(modulus, 'base64url');
  if (((n[n.length - 1] as number) & 1) === 0) return false;
  if (gcd(BigInt(`0x${n.toString('hex')}`), SMALL_PRIMES_PRODUCT) !== 1n) return false;
  return !checkPrimeSync(n, { checks: 1 });
}

/**
 * The proof's key, imported by node:crypto. An EC key's point is checked on its curve by the
 * import itself (OpenSSL refuses a point that is not on it: "Invalid JWK EC key"); RSA keys are
 * held to acceptableRsaKey.
 */
function importKey(members: Record<string, string>): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: members, format: 'jwk' });
  } catch {
    throw malformed();
  }
  if (key.asymmetricKeyType === 'rsa' && !acceptableRsaKey(key, members['n'] as string)) {
    throw malformed();
  }
  return key;
}

/**
 * Whether the signature is valid, checked on libuv's thread pool (node:crypto's verify with a
 * callback): the one expensive step of a proof then runs beside the event loop instead of on it,
 * so that request handling goes on while it runs.
 */
function signatureValid(
  alg: Alg,
  key: KeyObject,
  signed: Buffer,
  signature: Buffer,
): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (err: Error | null, valid: boolean) => resolve(err === null && valid);
    try {
      switch (alg) {
        case 'ES256':
          // JWS carries ECDSA signatures as raw r||s (RFC 7518 §3.4), 64 bytes for P-256.
          if (signature.length !== 64) return resolve(false);
          return verifySignature(
            'sha256',
            signed,
            { key, dsaEncoding: 'ieee-p1363' },
            signature,
            done,
          );
        case 'RS256':
          return verifySignature('sha256', signed, key, signature, done);
        case 'PS256':
          return verifySignature(
            'sha256',
            signed,
            { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
            signature,
            done,
          );
      }
    } catch {
      resolve(false);
    }
  });
}

interface CheckedHeader {
  alg: Alg;
  thumbprint: string;
  key: KeyObject;
}

/**
 * What a kept header costs: its text, the thumbprint, and the imported key (OpenSSL's key and
 * Node's KeyObject: about 1-2 KiB for P-256 and RSA-2048, counted as 2 KiB).
 */
const headerEntryBytes = (encodedHeader: string) => 2 * encodedHeader.length + 2048 + 256;

export function createDpopVerifier(options: DpopOptions = {}) {
  const windowMs = (options.iatWindowSec ?? 60) * 1000;
  // The jtis of accepted proofs, each until its iat leaves the window, bounded in bytes. A full
  // table refuses new proofs rather than forget a live one (which would let its replay through).
  const seen = new ReplayTable(options.replayCacheBytes ?? 8 * 1024 * 1024);
  // Each key's share of it, so that one client cannot lock every other one out.
  const share = options.replayShare ?? DEFAULT_REPLAY_SHARE;
  const shares =
    share < 1
      ? new ReplayShares(Math.max(1, Math.floor(seen.capacity * share)), windowMs / 1000)
      : undefined;
  // Encoded protected header → what checking it gave (algorithm, key thumbprint, imported key).
  // A client signs every proof under the same header bytes, and everything checked about the
  // header follows from those bytes alone, so a header seen before is not decoded, checked and
  // imported again. Only headers whose key an access token is bound to are kept (any other is
  // checked for its proof alone), so a client cannot fill the cache with throw-away keys.
  const headers = new LRUCache<string, CheckedHeader>({
    maxSize: options.keyCacheBytes ?? 2 * 1024 * 1024,
    sizeCalculation: (_value, encodedHeader) => headerEntryBytes(encodedHeader),
  });

  function checkedHeader(encodedHeader: string, jkt: string): CheckedHeader {
    const cached = headers.get(encodedHeader);
    if (cached) return cached;
    const header = decodeJsonObject(encodedHeader);
    if (header['crit'] !== undefined) throw malformed();
    const { typ, alg } = header;
    if (typeof typ !== 'string' || normalizeTyp(typ) !== 'dpop+jwt') throw malformed();
    if (!isAcceptedAlg(alg)) throw malformed();
    const { thumbprint, members } = checkedJwk(header['jwk'], alg);
    const checked: CheckedHeader = { alg, thumbprint, key: importKey(members) };
    if (thumbprint === jkt) headers.set(encodedHeader, checked);
    return checked;
  }

  return async function verifyProof(input: ProofInput): Promise<void> {
    const parts = input.proof.split('.');
    if (parts.length !== 3 || !parts.every((p) => BASE64URL.test(p))) throw malformed();
    const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
    const { alg, thumbprint, key } = checkedHeader(encodedHeader, input.jkt);
    const bound = thumbprint === input.jkt;
    const signed = Buffer.from(`${encodedHeader}.${encodedPayload}`, 'ascii');
    if (!(await signatureValid(alg, key, signed, Buffer.from(encodedSignature, 'base64url')))) {
      throw malformed();
    }
    const payload = decodeJsonObject(encodedPayload);
    // As jose's claim checks: the registered time claims, when present, are numbers and honoured.
    for (const claim of ['iat', 'nbf', 'exp']) {
      const value = payload[claim];
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
        throw malformed();
      }
    }
    const nowSec = Math.floor(input.nowMs / 1000);
    if (typeof payload['nbf'] === 'number' && payload['nbf'] > nowSec) throw malformed();
    if (typeof payload['exp'] === 'number' && payload['exp'] <= nowSec) throw malformed();

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
    const expectedAth =
      input.accessTokenHash ??
      createHash('sha256').update(input.accessToken, 'ascii').digest('base64url');
    if (ath !== expectedAth) {
      throw new ProofError('The DPoP proof ath does not match the access token');
    }
    if (!bound) {
      throw new ProofError('The DPoP proof is not signed by the key the access token is bound to');
    }

    // Last, so that only proofs that passed every other check occupy the cache. A proof stays
    // acceptable while its iat is within the window, so its jti is remembered as long.
    const digest = hash('sha256', `${input.jkt}:${jti}`, 'buffer');
    const replayKey = ReplayTable.keyOf(digest);
    const wait = shares?.wait(input.jkt, input.nowMs) ?? 0;
    if (wait > 0) throw new ReplayShareExceededError(wait);
    const claimed = seen.claim(replayKey, iat * 1000 + windowMs, input.nowMs);
    if (claimed === 'replay') throw new ProofError('The DPoP proof has been used before', true);
    if (claimed === 'fresh') shares?.count(input.jkt, input.nowMs);
    if (claimed === 'full') {
      throw new ReplayStoreUnavailableError(
        'the DPoP replay cache is full (dpop.replayCacheBytes): proofs are refused until entries expire',
      );
    }
    const shared = options.sharedReplayStore;
    if (shared) {
      // The key is a hash: bucket keys allow few characters, and a jti is the client's choice.
      const key = digest.toString('base64url');
      let first: boolean;
      try {
        first = await shared.claim(key);
      } catch (err) {
        // Not accepted: a retry of this proof must not meet our own mark.
        seen.release(replayKey, input.nowMs);
        throw new ReplayStoreUnavailableError(
          `The DPoP replay store cannot be reached: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      if (!first) throw new ProofError('The DPoP proof has been used before', true);
    }
  };
}
