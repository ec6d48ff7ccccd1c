import type { FasteMetadata, PiType } from './types';

/**
 * Definition templates: reference data shipped with the service. A definition is created from one,
 * and the template fixes its type and fixed metadata. The GUIDs are stable and documented in
 * apps/privacy-api/README.md.
 */
export interface DefinitionTemplate {
  definisjonMalGuid: string;
  navn: string;
  typePi: PiType;
  fasteMetadata: FasteMetadata;
  takesPeriods: boolean;
}

const NO_TIME_LIMIT = { tidsbegrensetFra: null, tidsbegrensetTil: null };

export const DEFINITION_TEMPLATES: readonly DefinitionTemplate[] = [
  {
    definisjonMalGuid: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01',
    navn: 'Samtykke uten tidsbegrensning',
    typePi: 'samtykke',
    fasteMetadata: { tidsbegrensning: NO_TIME_LIMIT, omfangElementer: [] },
    takesPeriods: false,
  },
  {
    definisjonMalGuid: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02',
    navn: 'Reservasjon uten tidsbegrensning',
    typePi: 'reservasjon',
    fasteMetadata: { tidsbegrensning: NO_TIME_LIMIT, omfangElementer: [] },
    takesPeriods: false,
  },
  {
    definisjonMalGuid: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e03',
    navn: 'Tilgangsbegrensning',
    typePi: 'tilgangsbegrensning',
    fasteMetadata: {
      tidsbegrensning: NO_TIME_LIMIT,
      omfangElementer: [],
      detaljertAngivelse: {
        kategoriOpplysninger: [
          'Journaldokumenter',
          'Kritisk informasjon',
          'Legemiddelopplysninger',
        ],
        rolleTilPasient: ['Fastlege', 'Behandlende helsepersonell', 'Helseforetak'],
      },
    },
    takesPeriods: false,
  },
  {
    definisjonMalGuid: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e04',
    navn: 'Samtykke for perioder innbyggeren gir',
    typePi: 'samtykke',
    fasteMetadata: { tidsbegrensning: NO_TIME_LIMIT, omfangElementer: [] },
    takesPeriods: true,
  },
];

const byGuid = new Map(DEFINITION_TEMPLATES.map((t) => [t.definisjonMalGuid.toLowerCase(), t]));

export function findTemplate(definisjonMalGuid: string): DefinitionTemplate | undefined {
  return byGuid.get(definisjonMalGuid.toLowerCase());
}

/** The built-in party and the youth-app consent definition it owns (created at start). */
export const BUILT_IN_PART = {
  partKode: 'helsenorge',
  navn: 'Helsenorge',
  kortNavn: 'Helsenorge',
  beskrivelse: 'Den nasjonale helseportalen',
  uri: 'https://www.helsenorge.no',
} as const;

export const YOUTH_APP_DEFINITION_GUID = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4eaa';
export const YOUTH_APP_TEMPLATE_GUID = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01';
