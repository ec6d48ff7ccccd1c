import { PRIVACY_CODES } from '@nhp/privacy-contracts';
import { AppError } from '@nhp/shared-errors';

/** The signature algorithms accepted for access tokens and DPoP proofs. */
export const ACCEPTED_ALGS = ['ES256', 'PS256', 'RS256'] as const;

export type AuthScheme = 'Bearer' | 'DPoP';

/**
 * Why a request was refused, in a bounded set (a metrics label): the token's validity period
 * (`exp`, `nbf`), its signature or key, its audience or issuer, a malformed header, token or
 * claims, the DPoP proof (or the binding between token and proof), a proof used before, a
 * missing scope (or the wrong kind of token), a missing grant, no credentials at all.
 */
export const AUTH_REFUSAL_REASONS = [
  'expired',
  'signature',
  'audience',
  'issuer',
  'malformed',
  'dpop_proof',
  'replay',
  'scope',
  'grant',
  'missing',
] as const;
export type AuthRefusalReason = (typeof AUTH_REFUSAL_REASONS)[number];

const refusalReasons = new WeakMap<AppError, AuthRefusalReason>();

/** The reason privacy-auth refused with this error; undefined for any other error. */
export function authRefusalReason(err: unknown): AuthRefusalReason | undefined {
  return err instanceof AppError ? refusalReasons.get(err) : undefined;
}

function withReason(err: AppError, reason: AuthRefusalReason): AppError {
  refusalReasons.set(err, reason);
  return err;
}

/**
 * What an authentication outage could not reach (a metrics label): the identity provider's keys
 * (`jwks`) or the DPoP replay store (`dpop_replay_store`: the shared bucket unreachable, or the
 * local replay table full). An outage is no refusal: the caller's credentials may be fine.
 */
export const AUTH_DEPENDENCIES = ['jwks', 'dpop_replay_store'] as const;
export type AuthDependency = (typeof AUTH_DEPENDENCIES)[number];

const unavailableDependencies = new WeakMap<AppError, AuthDependency>();

/** The dependency whose outage made privacy-auth answer with this error; undefined otherwise. */
export function authUnavailableDependency(err: unknown): AuthDependency | undefined {
  return err instanceof AppError ? unavailableDependencies.get(err) : undefined;
}

/** 500 EPVK-100503: a dependency of authentication cannot be used now (an outage, no verdict). */
export function authUnavailable(message: string, dependency: AuthDependency): AppError {
  const err = new AppError({
    code: PRIVACY_CODES.unavailable,
    status: 500,
    message,
    category: 'unavailable',
    expose: true,
  });
  unavailableDependencies.set(err, dependency);
  return err;
}

/**
 * 429 EPVK-100429: the request's DPoP key has its share of the replay table in use (a verdict on
 * this key alone, not an outage: the other keys go on); `Retry-After` says when it may go on.
 */
export function replayShareExceeded(retryAfterSec: number): AppError {
  return new AppError({
    code: PRIVACY_CODES.replayShareExceeded,
    status: 429,
    message: `This DPoP key has sent more proofs than the service keeps for one key; retry after ${retryAfterSec} s`,
    category: 'rate-limit',
    expose: true,
    headers: { 'Retry-After': String(retryAfterSec) },
  });
}

/** RFC 6750 / RFC 9449 error codes of a WWW-Authenticate challenge. */
export type ChallengeError =
  'invalid_request' | 'invalid_token' | 'invalid_dpop_proof' | 'insufficient_scope';

interface Challenge {
  /** The scheme the client used, which carries the error; the other is offered without one. */
  scheme?: AuthScheme;
  error?: ChallengeError;
  description?: string;
  scope?: string;
}

const quoted = (value: string) => `"${value.replace(/["\\]/g, '')}"`;

/**
 * Both schemes are always offered, so a client learns that DPoP is accepted (RFC 9449 §7.1: the
 * DPoP challenge names the accepted proof algorithms); the scheme the client used carries the
 * error. Descriptions are our own fixed sentences, never anything taken from the request.
 */
export function wwwAuthenticate(challenge: Challenge = {}): string {
  const params = (scheme: AuthScheme): string[] => {
    const list: string[] = [];
    if (challenge.error && challenge.scheme === scheme) {
      list.push(`error=${quoted(challenge.error)}`);
      if (challenge.description) list.push(`error_description=${quoted(challenge.description)}`);
      if (challenge.scope) list.push(`scope=${quoted(challenge.scope)}`);
    }
    if (scheme === 'DPoP') list.push(`algs=${quoted(ACCEPTED_ALGS.join(' '))}`);
    return list;
  };
  const bearer = params('Bearer');
  const dpop = params('DPoP');
  return [bearer.length ? `Bearer ${bearer.join(', ')}` : 'Bearer', `DPoP ${dpop.join(', ')}`].join(
    ', ',
  );
}

/** 401: missing, malformed or badly signed credentials, or (expired) credentials that have expired. */
export function unauthenticated(
  message: string,
  challenge: Challenge & { expired?: boolean; reason: AuthRefusalReason },
): AppError {
  return withReason(
    new AppError({
      code: PRIVACY_CODES.unauthenticated,
      status: 401,
      message,
      category: challenge.expired ? 'credentials-expired' : 'authentication',
      headers: { 'WWW-Authenticate': wwwAuthenticate(challenge) },
    }),
    challenge.reason,
  );
}

/**
 * Refusal of an authenticated caller: 403 where the interface lists 403, 401 elsewhere (the
 * interface declares no 403 there). A 401 must carry a challenge; 403 gets one as RFC 6750 §3.1
 * describes for insufficient_scope.
 */
export function refused(
  message: string,
  status: 401 | 403,
  scheme: AuthScheme,
  scope?: string,
): AppError {
  return withReason(
    new AppError({
      code: PRIVACY_CODES.refused,
      status,
      message,
      category: 'authorization',
      headers: {
        'WWW-Authenticate': wwwAuthenticate({
          scheme,
          error: 'insufficient_scope',
          description: message,
          scope,
        }),
      },
    }),
    'scope',
  );
}
