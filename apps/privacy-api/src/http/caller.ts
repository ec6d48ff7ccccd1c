import {
  ACCEPTED_ALGS,
  callerOf,
  type AuthenticatedCaller,
  type AuthScheme,
} from '@nhp/privacy-auth';
import { PRIVACY_CODES, type Caller } from '@nhp/privacy-contracts';
import { AppError } from '@nhp/shared-errors';
import type { Request } from 'express';

/**
 * The use cases' Caller for a verified token, in the request `requestId`: the one place it is
 * built, for the routes and the fast path alike.
 */
export function useCaseCaller(verified: AuthenticatedCaller, requestId: unknown): Caller {
  const caller: Caller = {
    clientId: verified.clientId,
    isAdmin: verified.isAdmin,
    pid: verified.pid,
  };
  if (typeof requestId === 'string') caller.requestId = requestId;
  return caller;
}

/**
 * A use case run for a verified caller. A use case refuses a caller as a missing scope is refused
 * (EPVK-100403: a citizen's token naming a citizen it does not act for); on these operations that
 * is a 401, which must say how to authenticate, so it gets the challenge privacy-auth gives its
 * own refusals: `insufficient_scope` on the scheme the client used (RFC 6750 §3.1, RFC 9449 §7.1).
 */
export async function runAs<T>(
  verified: AuthenticatedCaller,
  requestId: unknown,
  useCase: (caller: Caller) => Promise<T>,
): Promise<T> {
  try {
    return await useCase(useCaseCaller(verified, requestId));
  } catch (err) {
    throw withChallenge(err, verified.scheme);
  }
}

/** A use case run for the caller `authenticate` verified for this request (see runAs). */
export function asCaller<T>(req: Request, useCase: (caller: Caller) => Promise<T>): Promise<T> {
  return runAs(callerOf(req), req.id, useCase);
}

function withChallenge(err: unknown, scheme: AuthScheme): unknown {
  if (!(err instanceof AppError) || err.code !== PRIVACY_CODES.refused || err.status !== 401) {
    return err;
  }
  if (err.headers['WWW-Authenticate'] !== undefined) return err;
  const error = `error="insufficient_scope", error_description="${err.message.replace(/["\\]/g, '')}"`;
  const algs = `algs="${ACCEPTED_ALGS.join(' ')}"`;
  const challenge =
    scheme === 'DPoP' ? `Bearer, DPoP ${error}, ${algs}` : `Bearer ${error}, DPoP ${algs}`;
  return new AppError({
    code: err.code,
    status: err.status,
    message: err.message,
    category: err.category,
    expose: err.expose,
    headers: { ...err.headers, 'WWW-Authenticate': challenge },
    cause: err,
  });
}
