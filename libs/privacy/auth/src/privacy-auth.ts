import { hash as sha } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Logger } from '@nhp/shared-logger';
import { hasCaller, newCaller, setCaller, type AuthenticatedCaller } from './caller';
import {
  createDpopVerifier,
  ProofError,
  ReplayShareExceededError,
  ReplayStoreUnavailableError,
  type DpopOptions,
} from './dpop';
import {
  ACCEPTED_ALGS,
  authUnavailable,
  replayShareExceeded,
  unauthenticated,
  type AuthRefusalReason,
  type AuthScheme,
} from './errors';
import { isJwksFetchFailure, keyGetter, type JwksSource } from './key-sources';
import { jktOf, optionalString, scopesOf } from './token-claims';

export interface PrivacyAuthOptions {
  issuer: string;
  /** Expected `aud`, and the prefix of the scopes (`<audience>/personverninnstilling_read`). */
  audience: string;
  jwks: JwksSource;
  /** Skew allowed on `exp` and `nbf`. Default 30. */
  clockToleranceSec?: number;
  /** The clock (ms since the epoch); tests inject one. */
  now?: () => number;
  dpop?: DpopOptions;
  /** Verified tokens kept by their hash until expiry. Default 10 000; 0 turns the cache off. */
  tokenCacheSize?: number;
  /** And at most this many bytes of them (an estimate, see tokenEntryBytes). Default 4 MiB. */
  tokenCacheBytes?: number;
  logger?: Logger;
}

export interface PrivacyAuthStats {
  /** Access tokens whose signature and claims were checked (cache misses). */
  tokenVerifications: number;
  /** Requests served by a cached verification. */
  tokenCacheHits: number;
}

/** What the token check reads of a request, whatever framework carries it. */
export interface AuthRequest {
  method: string;
  /** The URL the client addressed (scheme, host, path and query), which a DPoP proof's htu names. */
  url: string;
  headers: IncomingHttpHeaders;
  /**
   * The header lines as received (Node's `rawHeaders`), to see repeats: Node keeps only the first
   * `Authorization` in `headers`. Without it, a repeated header cannot be refused.
   */
  rawHeaders?: readonly string[];
  /**
   * The connection the request came on (its socket), if the caller has one. The last Bearer token
   * accepted on a connection is remembered with it (see `verify`); without it, every request takes
   * the token cache's way.
   */
  connection?: object;
}

export interface PrivacyAuth {
  /**
   * Verifies the request's access token (and DPoP proof); sets the caller for callerOf(req); throws
   * 401. A request that already carries a caller (set by a fast path with `verify` and
   * `setCaller`) is let through unchecked: its proof was checked once, and a second check would
   * see its jti as a replay.
   */
  authenticate: RequestHandler;
  /** The check itself, framework-free: the caller, or a 401 (500 when the keys are unreachable). */
  verify(request: AuthRequest): Promise<AuthenticatedCaller>;
  /** Counters for tests and metrics. */
  stats(): PrivacyAuthStats;
}

/** What a verified access token says, kept per token hash. */
interface VerifiedToken {
  clientId: string | undefined;
  scopes: ReadonlySet<string>;
  pid: string | undefined;
  /** `cnf.jkt`: the token is bound to this DPoP key. */
  jkt: string | undefined;
  expMs: number;
  /**
   * The caller the token makes, built once: a token is either DPoP-bound (`jkt`) or not, so it
   * has one scheme it is accepted under, and the caller is the same on every request it comes with.
   */
  caller: AuthenticatedCaller;
}

/**
 * What a cached verification costs, estimated: its key, its strings (two bytes a character at
 * worst) and, for the objects around them (the entry, the scope set, the cache's own slots), 64
 * bytes a scope and 256 more.
 */
function tokenEntryBytes(token: VerifiedToken, hash: string): number {
  // 128 more for the caller object and its set of scope kinds.
  let bytes = 384 + 2 * hash.length;
  for (const text of [token.clientId, token.pid, token.jkt]) bytes += 2 * (text?.length ?? 0);
  for (const scope of token.scopes) bytes += 64 + 2 * scope.length;
  return bytes;
}
// RFC 7235 token68, which is what a JWT is; one space (or more) after the scheme name.
const AUTHORIZATION = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i;
const ACCEPTED_TYP = new Set(['at+jwt', 'jwt']);

/** The URL the client addressed, as Express sees it (trust proxy decides whether X-Forwarded-* count). */
function requestUrlOf(req: Request): string {
  return `${req.protocol}://${req.host}${req.originalUrl}`;
}

export function createPrivacyAuth(options: PrivacyAuthOptions): PrivacyAuth {
  const now = options.now ?? Date.now;
  const toleranceSec = options.clockToleranceSec ?? 30;
  const getKey = keyGetter(options.jwks, options.logger);
  const remote = 'url' in options.jwks;
  const verifyProof = createDpopVerifier(options.dpop);
  const cacheSize = options.tokenCacheSize ?? 10_000;
  // Keyed by SHA-256 of the token, so the cache holds no usable credential. Expiry is checked on
  // every hit against the injected clock; the LRU bound keeps memory flat whatever the traffic.
  const verified =
    cacheSize > 0
      ? new LRUCache<string, VerifiedToken>({
          max: cacheSize,
          maxSize: options.tokenCacheBytes ?? 4 * 1024 * 1024,
          sizeCalculation: tokenEntryBytes,
        })
      : undefined;
  const stats: PrivacyAuthStats = { tokenVerifications: 0, tokenCacheHits: 0 };
  const log = options.logger;

  /**
   * The kept verification of a token, while it has not expired. Asked before verifyToken, outside
   * it: a hit, the usual case, then costs no promise of its own.
   */
  function cachedToken(hash: string): VerifiedToken | undefined {
    const cached = verified?.get(hash);
    if (!cached) return undefined;
    if (unexpired(cached)) {
      stats.tokenCacheHits += 1;
      return cached;
    }
    verified?.delete(hash);
    return undefined;
  }

  function unexpired(token: VerifiedToken): boolean {
    return token.expMs + toleranceSec * 1000 > now();
  }

  /**
   * The Bearer token last accepted on each open connection, with its Authorization header as
   * sent. A client keeps its connection and sends the same token with request after request (a
   * system's token is valid for many minutes), so the header compared as text is enough to know
   * the token again: no pattern, no SHA-256 and no cache lookup, which are most of what a check
   * of a known token costs. Held by the connection (a WeakMap entry), so it goes with it: the
   * token is kept no longer than the connection that carries it lives, and a header is compared
   * only with what came before on the same connection. DPoP tokens are not remembered: each
   * request brings a proof of its own, checked against the token's hash. Off with the token cache
   * (tokenCacheSize 0: every request's token is checked).
   */
  const lastBearer = new WeakMap<object, { authorization: string; token: VerifiedToken }>();

  /**
   * Checks a token that is not kept (cachedToken), and keeps it. `hash` is base64url(SHA-256(token)):
   * the cache key, and the `ath` a DPoP proof must carry.
   */
  async function verifyToken(
    token: string,
    hash: string,
    scheme: AuthScheme,
  ): Promise<VerifiedToken> {
    stats.tokenVerifications += 1;

    // Only the canonical text of a token is taken (three base64url parts, without padding or spare
    // bits), so one token has one cache entry and one `ath`: Node's base64url decoding (and so
    // jose's) also takes `+`, `/`, `=` and a last character with other spare bits, which would
    // make many texts of one signature. Checked on a miss only: a cached text passed it.
    if (!isCanonicalJwt(token)) {
      throw unauthenticated('The access token is malformed', {
        scheme,
        error: 'invalid_token',
        description: 'malformed token',
        reason: 'malformed',
      });
    }
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw unauthenticated('The access token is malformed', {
        scheme,
        error: 'invalid_token',
        description: 'malformed token',
        reason: 'malformed',
      });
    }
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : undefined;
    if (typ === undefined || !ACCEPTED_TYP.has(typ.replace(/^application\//, ''))) {
      throw unauthenticated('The access token type (typ) must be at+jwt or JWT', {
        scheme,
        error: 'invalid_token',
        description: 'wrong token type',
        reason: 'malformed',
      });
    }

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: [...ACCEPTED_ALGS],
        requiredClaims: ['exp'],
        clockTolerance: toleranceSec,
        currentDate: new Date(now()),
      }));
    } catch (err) {
      throw tokenError(err, scheme);
    }

    let result: VerifiedToken;
    try {
      const claims = {
        clientId: optionalString(payload, 'client_id'),
        scopes: scopesOf(payload['scope']),
        pid: optionalString(payload, 'pid'),
        jkt: jktOf(payload),
      };
      result = {
        ...claims,
        expMs: (payload.exp as number) * 1000,
        caller: newCaller(options.audience, claims, claims.jkt === undefined ? 'Bearer' : 'DPoP'),
      };
    } catch (err) {
      log?.debug({ reason: (err as Error).message }, 'access token refused: claims');
      throw unauthenticated(`The access token's claims are malformed: ${(err as Error).message}`, {
        scheme,
        error: 'invalid_token',
        description: 'malformed claims',
        reason: 'malformed',
      });
    }
    verified?.set(hash, result);
    return result;
  }

  function tokenError(err: unknown, scheme: AuthScheme) {
    // jose's error codes name the check (ERR_JWT_EXPIRED, ERR_JWS_SIGNATURE_VERIFICATION_FAILED,
    // ...); only the code is logged, never the token.
    log?.debug({ reason: errorCode(err) }, 'access token refused');
    if (err instanceof joseErrors.JWTExpired) {
      return unauthenticated('The access token has expired', {
        scheme,
        error: 'invalid_token',
        description: 'token expired',
        expired: true,
        reason: 'expired',
      });
    }
    if (err instanceof joseErrors.JWTClaimValidationFailed) {
      return unauthenticated(
        `The access token is not accepted: its ${err.claim} claim does not match`,
        {
          scheme,
          error: 'invalid_token',
          description: `${err.claim} claim not accepted`,
          reason: claimReason(err.claim),
        },
      );
    }
    if (remote && isJwksFetchFailure(err)) {
      // The token may well be fine: we could not get the keys to check it. An outage, like an
      // unreachable database, not a verdict on the client's credentials.
      log?.warn({ reason: errorCode(err) }, 'the JWKS could not be fetched');
      return authUnavailable(
        "The identity provider's signing keys could not be fetched; try again later",
        'jwks',
      );
    }
    return unauthenticated('The access token is malformed or its signature is invalid', {
      scheme,
      error: 'invalid_token',
      description: 'invalid token',
      // A token that is no JWS/JWT at all, or one whose signature or key does not check out.
      reason:
        err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid
          ? 'malformed'
          : 'signature',
    });
  }

  async function verify(req: AuthRequest): Promise<AuthenticatedCaller> {
    const repeated = req.rawHeaders === undefined ? undefined : repeatedHeader(req.rawHeaders);
    if (repeated !== undefined) {
      // Node keeps the first Authorization, a proxy in front may act on the last: two headers
      // mean two readings of who is calling, so neither is taken (RFC 9449 §4.3: one proof).
      const dpop = repeated === 'dpop';
      throw unauthenticated(
        `Exactly one ${dpop ? 'DPoP proof' : 'Authorization'} header is allowed`,
        {
          scheme: dpop ? 'DPoP' : 'Bearer',
          error: dpop ? 'invalid_dpop_proof' : 'invalid_request',
          description: dpop ? 'repeated DPoP header' : 'repeated Authorization header',
          reason: dpop ? 'dpop_proof' : 'malformed',
        },
      );
    }
    const authorization = req.headers.authorization;
    const connection = req.connection;
    if (connection !== undefined && authorization !== undefined && verified !== undefined) {
      const last = lastBearer.get(connection);
      if (last !== undefined && last.authorization === authorization && unexpired(last.token)) {
        stats.tokenCacheHits += 1;
        return last.token.caller;
      }
    }
    if (authorization === undefined || authorization === '') {
      throw unauthenticated('An access token is required (Authorization: Bearer or DPoP)', {
        reason: 'missing',
      });
    }
    const match = AUTHORIZATION.exec(authorization);
    if (!match) {
      throw unauthenticated('The Authorization header must be "Bearer <token>" or "DPoP <token>"', {
        scheme: /^dpop\b/i.test(authorization) ? 'DPoP' : 'Bearer',
        error: 'invalid_request',
        description: 'malformed Authorization header',
        reason: 'malformed',
      });
    }
    const scheme: AuthScheme = (match[1] as string).toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
    const token = match[2] as string;
    // The token is ASCII (token68), so this is also the DPoP `ath` of RFC 9449. One-shot `hash`:
    // a Hash object per request cost more than the digest itself.
    const hash = sha('sha256', token, 'base64url');
    const claims = cachedToken(hash) ?? (await verifyToken(token, hash, scheme));

    if (scheme === 'Bearer') {
      if (claims.jkt !== undefined) {
        throw unauthenticated('This access token is DPoP-bound: send it as DPoP with a proof', {
          scheme,
          error: 'invalid_token',
          description: 'DPoP-bound token sent as Bearer',
          reason: 'dpop_proof',
        });
      }
      if (connection !== undefined && verified !== undefined) {
        lastBearer.set(connection, { authorization, token: claims });
      }
    } else {
      if (claims.jkt === undefined) {
        throw unauthenticated('A token sent as DPoP must be bound to a key (cnf.jkt)', {
          scheme,
          error: 'invalid_token',
          description: 'token not DPoP-bound',
          reason: 'dpop_proof',
        });
      }
      const proof = req.headers.dpop;
      // Node joins repeated DPoP headers with ", "; a JWT never contains one (RFC 9449 §4.3: one proof).
      if (typeof proof !== 'string' || proof === '' || proof.includes(',')) {
        throw unauthenticated('Exactly one DPoP proof header is required', {
          scheme,
          error: 'invalid_dpop_proof',
          description: 'missing DPoP proof',
          reason: 'dpop_proof',
        });
      }
      try {
        await verifyProof({
          proof,
          method: req.method,
          requestUrl: req.url,
          accessToken: token,
          accessTokenHash: hash,
          jkt: claims.jkt,
          nowMs: now(),
        });
      } catch (err) {
        if (err instanceof ReplayShareExceededError) {
          // This key alone is held back (429, its own code, Retry-After); the others go on.
          log?.warn(
            { retryAfterSec: err.retryAfterSec },
            'DPoP proof refused: its key has its share of the replay table in use',
          );
          throw replayShareExceeded(err.retryAfterSec);
        }
        if (err instanceof ReplayStoreUnavailableError) {
          // Refused rather than accepted unchecked: a replay must never pass (503-class, as the
          // identity provider's keys being unreachable).
          log?.warn(
            { reason: err.message },
            'DPoP proof refused: its replay check cannot be made now',
          );
          throw authUnavailable(
            'The DPoP proof cannot be checked for replay now; try again later',
            'dpop_replay_store',
          );
        }
        if (!(err instanceof ProofError)) throw err;
        log?.debug({ reason: err.message }, 'DPoP proof refused');
        throw unauthenticated(err.message, {
          scheme,
          error: 'invalid_dpop_proof',
          description: err.message,
          reason: err.replay ? 'replay' : 'dpop_proof',
        });
      }
    }

    // The scheme is the token's (checked above), so its kept caller is this request's.
    return claims.caller;
  }

  const authenticate: RequestHandler = async (req, _res, next) => {
    if (!hasCaller(req)) {
      setCaller(
        req,
        await verify({
          method: req.method,
          url: requestUrlOf(req),
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          connection: req.socket,
        }),
      );
    }
    next();
  };

  return { authenticate, verify, stats: () => ({ ...stats }) };
}

/** A claim jose refused: `aud` and `iss` by name, the validity period (`nbf`) as expired. */
function claimReason(claim: string): AuthRefusalReason {
  if (claim === 'aud') return 'audience';
  if (claim === 'iss') return 'issuer';
  if (claim === 'nbf' || claim === 'exp') return 'expired';
  return 'malformed';
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'unknown';
}

/** The credential header sent more than once ('authorization' or 'dpop'), if any. */
export function repeatedHeader(
  rawHeaders: readonly string[],
): 'authorization' | 'dpop' | undefined {
  let authorization = 0;
  let dpop = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    // Lengths first: most header names are neither, and this runs on every request.
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization += 1;
    else if (name.length === 4 && name.toLowerCase() === 'dpop') dpop += 1;
  }
  if (authorization > 1) return 'authorization';
  if (dpop > 1) return 'dpop';
  return undefined;
}

const JWT_PART = /^[A-Za-z0-9_-]+$/;

/** A compact JWS of three base64url parts, each as base64url encodes its bytes (no spare bits). */
function isCanonicalJwt(token: string): boolean {
  const parts = token.split('.');
  return (
    parts.length === 3 &&
    parts.every(
      (part) =>
        JWT_PART.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part,
    )
  );
}
