import type {
  HentInnstillingDefinisjonerQuery,
  HentInnstillingDefinisjonerResponse,
  InnstillingDefinisjon,
} from '@nhp/privacy-contracts';
import { mayUsePart } from '../definition-access';
import { privacyErrors } from '../errors';
import type { Actor, Definition, DefinitionLookup, GrantLookup } from '../types';

export interface DefinitionListingPorts {
  definitions: Pick<DefinitionLookup, 'listDefinitionsOfPart'>;
  grants: GrantLookup;
  parts: { exists(partKode: string): Promise<boolean> };
}

/** A definition as its listing shows it: the fields it was created with, its status and type. */
export function definitionListingView(definition: Definition): InnstillingDefinisjon {
  return {
    definisjonGuid: definition.definisjonGuid,
    definisjonMalGuid: definition.definisjonMalGuid,
    partKode: definition.partKode,
    navn: definition.navn,
    beskrivelse: definition.beskrivelse,
    visning: definition.visning,
    fullstendigTekstInnhold: definition.fullstendigTekstInnhold,
    kravTilLesingAvFullstendigTekst: definition.kravTilLesingAvFullstendigTekst,
    sortering: definition.sortering,
    replikering: definition.replikering,
    relasjoner: definition.relasjoner.map((r) => ({ ...r })),
    status: definition.status,
    typePi: definition.typePi,
  };
}

/**
 * GET /innstillingdefinisjon/v1: which definitions of a party the caller may read, so that a
 * downstream copy knows what to walk. Grants are per party, so the caller sees all of a party's
 * definitions or none (admin: all). An unknown party is EPVK-102404, as on a definition: parties
 * are not secret (their codes are in every event subject), and a mistyped partKode should not
 * look like a party without definitions. A party the caller has no read grant for answers an
 * empty list, exactly as a party without definitions does, so grants do not leak.
 */
export function createDefinitionListing(ports: DefinitionListingPorts) {
  return async function listDefinitions(
    caller: Actor,
    query: HentInnstillingDefinisjonerQuery,
  ): Promise<HentInnstillingDefinisjonerResponse> {
    const { partKode } = query;
    if (!(await ports.parts.exists(partKode))) throw privacyErrors.unknownPart(partKode);
    if (!(await mayUsePart(ports.grants, caller, partKode, 'read'))) {
      return { partKode, definisjoner: [] };
    }
    const definitions = await ports.definitions.listDefinitionsOfPart(partKode);
    const definisjoner = definitions
      .map(definitionListingView)
      .sort((a, b) =>
        a.definisjonGuid < b.definisjonGuid ? -1 : a.definisjonGuid > b.definisjonGuid ? 1 : 0,
      );
    return { partKode, definisjoner };
  };
}

export type ListDefinitions = ReturnType<typeof createDefinitionListing>;
