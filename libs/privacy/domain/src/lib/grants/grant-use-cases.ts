import type { Caller } from '@nhp/privacy-contracts';
import { auditOf, type AuditContext } from '../audit/audit';
import { privacyErrors } from '../errors';
import type { PartStore } from '../parts/part-use-cases';
import type { GrantLookup } from '../types';

/** A party's grant to a client: which of read and write the client may use on its definitions. */
export interface Grant {
  clientId: string;
  partKode: string;
  read: boolean;
  write: boolean;
  updatedAt: Date;
}

export interface GrantRights {
  read: boolean;
  write: boolean;
}

/** What the grant use cases need of storage (data-access's grant repository). */
export interface GrantStore extends GrantLookup {
  /** Sets the pair's rights to exactly these (with its audit record); returns the grant. */
  set(clientId: string, partKode: string, rights: GrantRights, audit: AuditContext): Promise<Grant>;
  /** Withdraws both rights; false when the pair gave nothing. */
  revoke(clientId: string, partKode: string, audit: AuditContext): Promise<boolean>;
  /** The grants that give something, of one client or of all. */
  list(filter?: { clientId?: string }): Promise<Grant[]>;
}

/**
 * Grants (privacy-admin's grant, revoke and grants; the sample data): which client may read or
 * write the settings of a party's definitions. Only operators manage them: the caller's admin
 * right is the entry point's check, as for parties.
 */
export function createGrantUseCases(ports: {
  parts: Pick<PartStore, 'exists'>;
  grants: GrantStore;
}) {
  return {
    /** Sets a client's rights on a party to exactly `rights`; an unknown party is EPVK-102404. */
    async grant(
      caller: Caller,
      input: { clientId: string; partKode: string } & GrantRights,
    ): Promise<Grant> {
      if (!(await ports.parts.exists(input.partKode))) {
        throw privacyErrors.unknownPart(input.partKode);
      }
      return ports.grants.set(
        input.clientId,
        input.partKode,
        { read: input.read, write: input.write },
        auditOf(caller),
      );
    },
    /** Withdraws a client's rights on a party; false when there was nothing to withdraw. */
    revoke: (caller: Caller, input: { clientId: string; partKode: string }): Promise<boolean> =>
      ports.grants.revoke(input.clientId, input.partKode, auditOf(caller)),
    /** The grants that give something (of one client with `clientId`). */
    list: (_caller: Caller, input: { clientId?: string } = {}): Promise<Grant[]> =>
      ports.grants.list(input.clientId === undefined ? {} : { clientId: input.clientId }),
  };
}

export type GrantUseCases = ReturnType<typeof createGrantUseCases>;
