import { ACCEPTED_ALGS, callerOf, type AuthScheme, type Caller } from '@nhp/privacy-auth';
import { PRIVACY_CODES } from '@nhp/privacy-contracts';
import type { AuditContext } from '@nhp/privacy-data-access';
import type { Actor } from '@nhp/privacy-domain';
import { AppError } from '@nhp/shared-errors';
import type { Request } from 'express';

/**
 * The domain's view of a verified caller: the one place it is built, so that every use case sees
 * the token's `pid` (whom a citizen's token may act for is the domain's rule).
 */
export function actorOfCaller(caller: Caller): Actor {
  return { clientId: caller.clientId, isAdmin: caller.isAdmin, pid: caller.pid };
}

/**
 * A use case run as `caller`. A use case refuses a caller as a missing scope is refused
 * (EPVK-100403: a citizen's token naming a citizen it does not act for); on these operations that
 * is a 401, which must say how to authenticate, so it gets the challenge privacy-auth gives its
 * own refusals: `insufficient_scope` on the scheme the client used (RFC 6750 §3.1, RFC 9449 §7.1).
 */
export async function asCaller<T>(
  caller: Caller,
  useCase: (actor: Actor) => Promise<T>,
): Promise<T> {
  try {
    return await useCase(actorOfCaller(caller));
  } catch (err) {
    throw withChallenge(err, caller.scheme);
  }
}

function withChallenge(err: unknown, scheme: AuthScheme): unknown {
  if (!(err instanceof AppError) || err.code !== PRIVACY_CODES.refused || err.status !== 401)
    return err;
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

/**
 * Who an audit record names for this request: the calling system's client id, or for a token in
 * a citizen's context "citizen" (the identity number goes in the record's target, never here).
 */
export function auditOf(req: Request): AuditContext {
  const caller = callerOf(req);
  const requestId = typeof req.id === 'string' ? req.id : undefined;
  if (caller.pid !== undefined) {
    return { actor: { kind: 'citizen', id: 'citizen' }, requestId };
  }
  return { actor: { kind: 'client', id: caller.clientId ?? '(no client_id)' }, requestId };
}
