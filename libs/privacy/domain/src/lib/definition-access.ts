import { privacyErrors } from './errors';
import type { Actor, Definition, DefinitionLookup, GrantAccess, GrantLookup } from './types';

/**
 * The definition a caller names, if the caller may use it for `access`; otherwise the same
 * EPVK-101500 as for an unknown definition, so that the existence of a definition the caller may
 * not use does not leak. A partKode that does not own the definition answers alike.
 */
export async function resolveDefinition(
  ports: { definitions: DefinitionLookup; grants: GrantLookup },
  actor: Actor,
  request: { definisjonGuid: string; partKode?: string | null | undefined },
  access: GrantAccess,
): Promise<Definition> {
  const definition = await ports.definitions.findDefinition(request.definisjonGuid);
  if (!definition) throw privacyErrors.unknownDefinition();
  if (request.partKode != null && request.partKode !== definition.partKode) {
    throw privacyErrors.unknownDefinition();
  }
  if (!(await mayUsePart(ports.grants, actor, definition.partKode, access))) {
    throw privacyErrors.noGrant();
  }
  return definition;
}

/** Admin-scope tokens need no grant; everyone else needs the party's grant for the access. */
export async function mayUsePart(
  grants: GrantLookup,
  actor: Actor,
  partKode: string,
  access: GrantAccess,
): Promise<boolean> {
  if (actor.isAdmin) return true;
  if (actor.clientId === undefined) return false;
  return grants.allows(actor.clientId, partKode, access);
}
