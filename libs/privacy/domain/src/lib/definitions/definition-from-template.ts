import type { DefinitionTemplate } from '../templates';
import type { Definition, Relasjon } from '../types';

/** The fields of a new definition that its creator chooses (the template fixes the rest). */
export interface NewDefinitionFields {
  definisjonGuid: string;
  partKode: string;
  navn?: string | null;
  beskrivelse?: string | null;
  visning?: string | null;
  fullstendigTekstInnhold?: string | null;
  kravTilLesingAvFullstendigTekst?: boolean;
  sortering?: number | null;
  replikering?: boolean;
  relasjoner?: Relasjon[];
}

/** A new definition of the template's type and fixed metadata; created `aktiv`. */
export function definitionFromTemplate(
  template: DefinitionTemplate,
  fields: NewDefinitionFields,
): Definition {
  return {
    definisjonGuid: fields.definisjonGuid.toLowerCase(),
    definisjonMalGuid: template.definisjonMalGuid,
    partKode: fields.partKode,
    navn: fields.navn ?? null,
    beskrivelse: fields.beskrivelse ?? null,
    visning: fields.visning ?? null,
    fullstendigTekstInnhold: fields.fullstendigTekstInnhold ?? null,
    kravTilLesingAvFullstendigTekst: fields.kravTilLesingAvFullstendigTekst ?? false,
    sortering: fields.sortering ?? null,
    replikering: fields.replikering ?? false,
    relasjoner: fields.relasjoner ?? [],
    status: 'aktiv',
    typePi: template.typePi,
    // A copy: the template is shared reference data.
    fasteMetadata: structuredClone(template.fasteMetadata),
    takesPeriods: template.takesPeriods,
  };
}
