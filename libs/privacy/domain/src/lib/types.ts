/** The three kinds of privacy setting (PersonvernInnstillingType). */
export const PI_TYPES = ['samtykke', 'reservasjon', 'tilgangsbegrensning'] as const;
export type PiType = (typeof PI_TYPES)[number];

export const DEFINITION_STATUSES = ['aktiv', 'inaktiv'] as const;
export type DefinitionStatus = (typeof DEFINITION_STATUSES)[number];

export interface Tidsbegrensning {
  tidsbegrensetFra: string | null;
  tidsbegrensetTil: string | null;
}

export interface OmfangElement {
  omfangKode: string | null;
  logiskOmfang: string | null;
  presisering: string | null;
}

export interface DetaljertAngivelseFaste {
  kategoriOpplysninger: string[] | null;
  rolleTilPasient: string[] | null;
}

/** A definition's fixed metadata, fixed by its template (the `...FasteMetadata` of its type). */
export interface FasteMetadata {
  tidsbegrensning: Tidsbegrensning;
  omfangElementer: OmfangElement[] | null;
  /** Access restriction only. */
  detaljertAngivelse?: DetaljertAngivelseFaste;
}

export interface Relasjon {
  definisjonGuid: string;
  relasjonType: string | null;
  beskrivelse: string | null;
}

/** A privacy setting definition as the domain sees it (plain object; no storage details). */
export interface Definition {
  definisjonGuid: string;
  definisjonMalGuid: string;
  partKode: string;
  navn: string | null;
  beskrivelse: string | null;
  visning: string | null;
  fullstendigTekstInnhold: string | null;
  kravTilLesingAvFullstendigTekst: boolean;
  sortering: number | null;
  replikering: boolean;
  relasjoner: Relasjon[];
  status: DefinitionStatus;
  typePi: PiType;
  fasteMetadata: FasteMetadata;
  /** The template lets the citizen give periods (`perioder`) within which the setting applies. */
  takesPeriods: boolean;
}

export type GrantAccess = 'read' | 'write';

/** Ports the use cases read definitions and grants through (data-access implements them). */
export interface DefinitionLookup {
  findDefinition(definisjonGuid: string): Promise<Definition | undefined>;
  listDefinitionsOfPart(partKode: string): Promise<Definition[]>;
}

export interface GrantLookup {
  allows(clientId: string, partKode: string, access: GrantAccess): Promise<boolean>;
}
