import { join } from 'node:path';
import {
  definitionFromTemplate,
  DEFINITION_TEMPLATES,
  type NewDefinitionFields,
} from '@nhp/privacy-domain';
import type {
  SettInkluderingRequest,
  SettInnbyggersPersonvernInnstillingV2Request,
} from '@nhp/privacy-contracts';

/**
 * What a new developer finds after `npm start`: a development party, one definition of each
 * template, a system client granted both rights on the party, a family of citizens with settings,
 * an inclusion and representation relationships. Every identity number here is synthetic (month +
 * 80), so it can never be a real person's; privacy-api accepts them outside production.
 */

export const SAMPLE_PART = {
  partKode: 'utvikling',
  navn: 'Utviklingsparten',
  kortNavn: 'Utvikling',
  beskrivelse: 'Eksempeldata for lokal utvikling (npm start)',
  uri: 'http://localhost:3001',
} as const;

/** The client id `npm run privacy-token` puts in its tokens by default. */
export const SAMPLE_CLIENT_ID = 'dev-client';

/** Synthetic citizens (identity numbers with month + 80). */
export const SAMPLE_CITIZENS = {
  /** Parent of three, holds a power of attorney for her mother: mint citizen tokens for her. */
  kari: '15868410024',
  ola: '03828610057',
  /** Born 2012-09-01. */
  emma: '01891250009',
  /** Born 2010-03-10, lives at another address. */
  jonas: '10831050069',
  /** Born 2019-11-30. */
  nora: '30911950037',
  solveig: '10815010030',
} as const;

const [samtykke, reservasjon, tilgangsbegrensning, perioder] = DEFINITION_TEMPLATES as [
  (typeof DEFINITION_TEMPLATES)[number],
  (typeof DEFINITION_TEMPLATES)[number],
  (typeof DEFINITION_TEMPLATES)[number],
  (typeof DEFINITION_TEMPLATES)[number],
];

/** A definition of the sample party, as privacy-api creates one from its template. */
function definitionFrom(
  template: (typeof DEFINITION_TEMPLATES)[number],
  fields: Omit<NewDefinitionFields, 'partKode'>,
) {
  return definitionFromTemplate(template, { partKode: SAMPLE_PART.partKode, ...fields });
}

export const SAMPLE_DEFINITIONS = {
  samtykke: definitionFrom(samtykke, {
    definisjonGuid: 'a1b2c3d4-0001-4000-8000-0000000000d1',
    navn: 'Samtykke til digital dialog',
    beskrivelse: 'Innbyggeren samtykker til at behandlere kan kontakte henne digitalt.',
    sortering: 1,
    replikering: true,
  }),
  reservasjon: definitionFrom(reservasjon, {
    definisjonGuid: 'a1b2c3d4-0001-4000-8000-0000000000d2',
    navn: 'Reservasjon mot oppslag i journal',
    beskrivelse: 'Innbyggeren reserverer seg mot oppslag uten samtykke.',
    sortering: 2,
  }),
  tilgangsbegrensning: definitionFrom(tilgangsbegrensning, {
    definisjonGuid: 'a1b2c3d4-0001-4000-8000-0000000000d3',
    navn: 'Sperring av helseopplysninger',
    beskrivelse: 'Innbyggeren sperrer navngitt helsepersonell eller helseforetak.',
    sortering: 3,
  }),
  perioder: definitionFrom(perioder, {
    definisjonGuid: 'a1b2c3d4-0001-4000-8000-0000000000d4',
    navn: 'Samtykke til deltakelse i studie',
    beskrivelse: 'Samtykket gjelder i periodene innbyggeren oppgir.',
    sortering: 4,
  }),
} as const;

/**
 * Citizens' settings, one of each kind. No `tidspunkt`: each is given "now" the first time; a
 * later run leaves a setting that exists alone (seed.ts).
 */
export const SAMPLE_SETTINGS: SettInnbyggersPersonvernInnstillingV2Request[] = [
  {
    innbyggerFnr: SAMPLE_CITIZENS.kari,
    definisjonGuid: SAMPLE_DEFINITIONS.samtykke.definisjonGuid,
    partKode: SAMPLE_PART.partKode,
    typePi: 'samtykke',
    aktiv: true,
  },
  {
    innbyggerFnr: SAMPLE_CITIZENS.kari,
    definisjonGuid: SAMPLE_DEFINITIONS.reservasjon.definisjonGuid,
    partKode: SAMPLE_PART.partKode,
    typePi: 'reservasjon',
    aktiv: true,
  },
  {
    innbyggerFnr: SAMPLE_CITIZENS.kari,
    definisjonGuid: SAMPLE_DEFINITIONS.perioder.definisjonGuid,
    partKode: SAMPLE_PART.partKode,
    typePi: 'samtykke',
    aktiv: true,
    saInnbyggerMetadata: {
      tidsbegrensning: {
        perioder: [{ fraDato: '2026-01-01T00:00:00Z', tilDato: '2030-12-31T23:59:59Z' }],
      },
    },
  },
  {
    innbyggerFnr: SAMPLE_CITIZENS.ola,
    definisjonGuid: SAMPLE_DEFINITIONS.tilgangsbegrensning.definisjonGuid,
    partKode: SAMPLE_PART.partKode,
    typePi: 'tilgangsbegrensning',
    aktiv: true,
    tbInnbyggerMetadata: {
      detaljertAngivelse: {
        navngittHelseperson: [{ nummer: '9144900', navn: 'Lege Legesen' }],
        helseforetak: [{ nummer: '974557746', navn: 'Eksempel helseforetak HF' }],
      },
    },
  },
];

/** Citizens who have given the youth-app consent (the built-in definition). */
export const SAMPLE_YOUTH_APP_CONSENTS: string[] = [SAMPLE_CITIZENS.emma];

/** An inclusion of Kari in the study the period consent belongs to. */
export const SAMPLE_INCLUSIONS: SettInkluderingRequest[] = [
  {
    innbyggerFnr: SAMPLE_CITIZENS.kari,
    partKode: SAMPLE_PART.partKode,
    personvernInnstillingDefinisjonId: SAMPLE_DEFINITIONS.perioder.definisjonGuid,
    inkluderingType: 'Deltager',
    aktiv: true,
  },
];

/** The representation relationships, in the import file format (`privacy-admin import-representation`). */
export const SAMPLE_REPRESENTATION_FILE = join(__dirname, '..', 'data', 'representation.ndjson');
