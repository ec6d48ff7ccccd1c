import { privacyErrors } from './errors';
import type { Caller } from '@nhp/privacy-contracts';
import type { Definition, DefinitionLookup, GrantAccess, GrantLookup } from './types';

/**
 * The definition a caller names, if the caller may use it for `access`; otherwise the same
 * EPVK-101500 as for an unknown definition, so that the existence of a definition the caller may
 * not use does not leak. A partKode that does not own the definition answers alike.
 */
export async function resolveDefinition(
  ports: { definitions: DefinitionLookup; grants: GrantLookup },
  caller: Caller,
  request: { definisjonGuid: string; partKode?: string | null | undefined },
  access: GrantAccess,
): Promise<Definition> {
  const definition = await ports.definitions.findDefinition(request.definisjonGuid);
  if (!definition) throw privacyErrors.unknownDefinition();
  if (request.partKode != null && request.partKode !== definition.partKode) {
    throw privacyErrors.unknownDefinition();
  }
  if (!(await mayUsePart(ports.grants, caller, definition.partKode, access))) {
    throw privacyErrors.noGrant();
  }
  return definition;
}

/**
 * Admin-scope tokens need no grant; everyone else needs the party's grant for the access. Not an
 * async function: the grant lookup's promise is the answer (every status check asks this).
 */
export function mayUsePart(
  grants: GrantLookup,
  caller: Caller,
  partKode: string,
  access: GrantAccess,
): Promise<boolean> {
  if (caller.isAdmin) return Promise.resolve(true);
  if (caller.clientId === undefined) return Promise.resolve(false);
  return grants.allows(caller.clientId, partKode, access);
}
