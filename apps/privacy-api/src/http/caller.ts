import { callerOf } from '@nhp/privacy-auth';
import type { AuditContext } from '@nhp/privacy-data-access';
import type { Actor } from '@nhp/privacy-domain';
import type { Request } from 'express';

/** The domain's view of the authenticated caller (after `authenticate`). */
export function actorOf(req: Request): Actor {
  const caller = callerOf(req);
  return { clientId: caller.clientId, isAdmin: caller.isAdmin, pid: caller.pid };
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
