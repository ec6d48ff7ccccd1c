import type { InnstillingDefinisjon } from '@nhp/privacy-contracts';
import type { Definition } from '../types';

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
