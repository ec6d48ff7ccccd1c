import { privacyErrors } from './errors';
import type { RepresentationLookup } from './representation/relationships';
import type { Caller } from '@nhp/privacy-contracts';

/**
 * The relationship types with which `fnr` acts for the other person (the type says what `fnr` is
 * to them): parent, guardian, holder of a power of attorney. Compared in any letter case.
 */
export const ACTING_FOR_TYPES: readonly string[] = ['foreldre', 'verge', 'fullmakt'];

export interface CitizenAccessPorts {
  /**
   * The imported representation relationships. Without it a citizen's token acts only for the
   * citizen themself (tools that run without tokens need none).
   */
  representation?: RepresentationLookup | undefined;
}

/**
 * Whether the caller may act for the citizen `innbyggerFnr`. A system token (no `pid`) may, as
 * far as this rule goes (its scope and the party's grant decide); a token in a citizen's context
 * only for that citizen, or for a citizen whom they represent: an imported relationship with
 * `fnr` = pid, `annenFnr` = that citizen and a type of ACTING_FOR_TYPES.
 */
export async function mayActFor(
  ports: CitizenAccessPorts,
  caller: Caller,
  innbyggerFnr: string,
): Promise<boolean> {
  if (caller.pid === undefined || caller.pid === innbyggerFnr) return true;
  if (!ports.representation) return false;
  const relationships = await ports.representation.findRelationships(caller.pid);
  return relationships.some(
    (r) =>
      r.annenFnr === innbyggerFnr &&
      ACTING_FOR_TYPES.includes(r.representasjonsforholdType.toLowerCase()),
  );
}

/**
 * Every use case that names a citizen calls this first (after the identity number's check): a
 * citizen's token naming someone it does not act for is refused as a missing scope is
 * (EPVK-100403), before anything about the definition is looked at.
 */
export async function assertMayActFor(
  ports: CitizenAccessPorts,
  caller: Caller,
  innbyggerFnr: string,
): Promise<void> {
  // mayActFor's answer without a lookup, asked here first: every status check of a system token
  // passes this way, and then costs no promise of mayActFor's own.
  if (caller.pid === undefined) return;
  if (!(await mayActFor(ports, caller, innbyggerFnr))) {
    throw privacyErrors.notActingFor(
      'The access token acts for a citizen and may not act for the citizen named by innbyggerFnr',
    );
  }
}

/** Operations over many citizens at once (the active-citizens walk) are for systems only. */
export function assertNotCitizenToken(caller: Caller): void {
  if (caller.pid !== undefined) {
    throw privacyErrors.notActingFor(
      "An access token in a citizen's context may not list the citizens of a definition",
    );
  }
}
