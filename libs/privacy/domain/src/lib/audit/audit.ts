import type { Caller } from '@nhp/privacy-contracts';

/** Who an audit record names. */
export interface AuditActor {
  /** client: a system's client_id; citizen: a citizen acting for themselves; admin: the admin CLI. */
  kind: 'client' | 'citizen' | 'admin';
  id: string;
}

/** Who makes a write and in which request: what the repositories put in its audit record. */
export interface AuditContext {
  actor: AuditActor;
  requestId?: string;
}

/**
 * Who an audit record of an administrative write (a party, a definition, a grant) names for this
 * caller: an operator's tool names its operator (admin); a token the calling system's client id,
 * or for a token in a citizen's context "citizen" (the identity number goes in the record's
 * target, never here).
 */
export function auditOf(caller: Caller): AuditContext {
  const actor: AuditActor =
    caller.operator !== undefined
      ? { kind: 'admin', id: caller.operator }
      : caller.pid !== undefined
        ? { kind: 'citizen', id: 'citizen' }
        : { kind: 'client', id: caller.clientId ?? '(no client_id)' };
  return caller.requestId === undefined ? { actor } : { actor, requestId: caller.requestId };
}
