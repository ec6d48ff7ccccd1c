import { z } from 'zod';
import { guidSchema } from './common';
import { partKodeSchema } from './parts';

/**
 * Citizens' privacy settings, version 2 (the operations under /personverninnstillinger).
 *
 * The interface names these bodies but does not show their fields; the shapes here follow the
 * fields our decisions list for each operation. Requests: every field optional and nullable unless
 * the decisions require it (clients omit null fields), every object strict. Responses: every field
 * always present (null where there is no value), so clients with strict models can parse them.
 */

export const PI_TYPE_VALUES = ['samtykke', 'reservasjon', 'tilgangsbegrensning'] as const;
export const piTypeSchema = z.enum(PI_TYPE_VALUES).meta({ id: 'PersonvernInnstillingType' });

/** Clients send typePi in lower case, others in the interface's spelling: compared case-insensitively. */
const piTypeInput = z
  .string()
  .transform((v) => v.toLowerCase())
  .pipe(piTypeSchema);

/**
 * Bounds of the citizen metadata. One recorded request keeps its metadata in the setting's
 * history, which lives in the setting's document (at most the last 400 requests, see the
 * repository): with these bounds a history entry stays under 30 kB, so the document stays well
 * under MongoDB's 16 MiB whatever a client sends.
 */
const MAX_TEXT = 200;
const MAX_ITEMS = 50;

const text = z.string().max(MAX_TEXT);
const optionalText = text.nullish();
// Any 8-4-4-4-12 hex GUID, as definitions accept (z.uuid() would refuse GUIDs that are not RFC 4122
// variants, which some clients' systems generate).
const uuid = guidSchema;

/**
 * A point in time: ISO 8601 with an offset or `Z`; a time without an offset, or a date alone,
 * is read as UTC (some clients send local-looking times).
 */
export const instantInputSchema = z.union([
  z.iso.datetime({ offset: true, local: true }),
  z.iso.date(),
]);

const innbyggerFnr = z.string().max(32).meta({
  description: "The citizen's national identity number (11 digits with valid check digits).",
});
// A party's code as parties are created (partKodeSchema), not any string: forPart has no
// definition to match first, so its partKode went straight into the grant lookup.
const partKode = partKodeSchema;

// ---------------------------------------------------------------- citizen metadata (requests)

const periodeInput = z.strictObject({
  fraDato: instantInputSchema.nullish(),
  tilDato: instantInputSchema.nullish(),
});
const innbyggerTidsbegrensningInput = z.strictObject({
  perioder: z.array(periodeInput).max(MAX_ITEMS).nullish(),
});
const tilgangsbegrensningDataInput = z.strictObject({
  nummer: optionalText,
  navn: optionalText,
});
const detaljertAngivelseInnbyggerInput = z.strictObject({
  navngittHelseperson: z.array(tilgangsbegrensningDataInput).max(MAX_ITEMS).nullish(),
  helseforetak: z.array(tilgangsbegrensningDataInput).max(MAX_ITEMS).nullish(),
});
const saInnbyggerMetadataInput = z.strictObject({
  tidsbegrensning: innbyggerTidsbegrensningInput.nullish(),
});
const reInnbyggerMetadataInput = z.strictObject({
  tidsbegrensning: innbyggerTidsbegrensningInput.nullish(),
});
const tbInnbyggerMetadataInput = z.strictObject({
  tidsbegrensning: innbyggerTidsbegrensningInput.nullish(),
  detaljertAngivelse: detaljertAngivelseInnbyggerInput.nullish(),
});

export type InnbyggerMetadataInput =
  z.infer<typeof saInnbyggerMetadataInput> | z.infer<typeof tbInnbyggerMetadataInput>;

// ---------------------------------------------------------------- requests

export const METADATA_FIELD_OF_TYPE = {
  samtykke: 'saInnbyggerMetadata',
  reservasjon: 'reInnbyggerMetadata',
  tilgangsbegrensning: 'tbInnbyggerMetadata',
} as const;

export const settInnbyggersPersonvernInnstillingV2RequestSchema = z
  .strictObject({
    innbyggerFnr,
    definisjonGuid: uuid,
    /** Informational only (never stored). */
    definisjonNavn: z.string().max(1000).nullish(),
    partKode,
    typePi: piTypeInput.nullish(),
    aktiv: z.boolean(),
    tidspunkt: instantInputSchema.nullish().meta({
      description:
        'When the citizen gave the setting (default: now). The current state is the latest by tidspunkt.',
    }),
    signertBevisMimeType: z.string().max(100).nullish(),
    /** Size and content are checked by the domain rules (EPVK-104400), not here. */
    signertBevisInnhold: z.string().nullish(),
    saInnbyggerMetadata: saInnbyggerMetadataInput.nullish(),
    reInnbyggerMetadata: reInnbyggerMetadataInput.nullish(),
    tbInnbyggerMetadata: tbInnbyggerMetadataInput.nullish(),
  })
  .superRefine((body, ctx) => {
    const given = Object.values(METADATA_FIELD_OF_TYPE).filter((field) => body[field] != null);
    if (given.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message: `give at most one of ${given.join(', ')}`,
        path: [given[1] as string],
      });
    } else if (given.length === 1 && body.typePi != null) {
      const expected = METADATA_FIELD_OF_TYPE[body.typePi];
      if (given[0] !== expected) {
        ctx.addIssue({
          code: 'custom',
          message: `typePi ${body.typePi} takes ${expected}`,
          path: [given[0] as string],
        });
      }
    }
  })
  .meta({ id: 'SettInnbyggersPersonvernInnstillingV2Request' });
export type SettInnbyggersPersonvernInnstillingV2Request = z.infer<
  typeof settInnbyggersPersonvernInnstillingV2RequestSchema
>;

export const sjekkInnbyggersPiStatusV2RequestSchema = z
  .strictObject({
    innbyggerFnr,
    definisjonGuid: uuid,
    /** Informational only (never stored). */
    definisjonNavn: z.string().max(1000).nullish(),
    partKode,
  })
  .meta({ id: 'SjekkInnbyggersPiStatusV2Request' });
export type SjekkInnbyggersPiStatusV2Request = z.infer<
  typeof sjekkInnbyggersPiStatusV2RequestSchema
>;

export const hentInnbyggersPiV2RequestSchema = z
  .strictObject({ innbyggerFnr, partKode })
  .meta({ id: 'HentInnbyggersPiV2Request' });
export type HentInnbyggersPiV2Request = z.infer<typeof hentInnbyggersPiV2RequestSchema>;

export const hentInnbyggersOpplastedeBevisV2RequestSchema = z
  .strictObject({ innbyggerFnr, definisjonGuid: uuid, partKode })
  .meta({ id: 'HentInnbyggersOpplastedeBevisV2Request' });
export type HentInnbyggersOpplastedeBevisV2Request = z.infer<
  typeof hentInnbyggersOpplastedeBevisV2RequestSchema
>;

const INT32_MAX = 2_147_483_647;

/**
 * A query value arrives as a string; only a plain decimal integer within int32 is accepted (an
 * empty value counts as absent: the first page).
 */
const pagingReferenceInput = z
  .string()
  .regex(/^\d{0,10}$/, 'expected a non-negative integer')
  .transform(Number)
  .pipe(z.int().min(0).max(INT32_MAX));

export const hentInnbyggereAktivePiForDefinisjonV2QuerySchema = z
  .strictObject({
    definisjonGuid: uuid,
    partKode: partKode.optional(),
    pagingReference: pagingReferenceInput.optional(),
  })
  .meta({ id: 'HentInnbyggereAktivePiForDefinisjonV2Query' });
export type HentInnbyggereAktivePiForDefinisjonV2Query = z.infer<
  typeof hentInnbyggereAktivePiForDefinisjonV2QuerySchema
>;

// ---------------------------------------------------------------- responses

const instant = z.iso.datetime();

export const periodeSchema = z
  .strictObject({ fraDato: instant.nullable(), tilDato: instant.nullable() })
  .meta({ id: 'Periode' });
export const innbyggerTidsbegrensningSchema = z
  .strictObject({ perioder: z.array(periodeSchema).nullable() })
  .meta({ id: 'InnbyggerTidsbegrensning' });
export const tilgangsbegrensningDataSchema = z
  .strictObject({ nummer: z.string().nullable(), navn: z.string().nullable() })
  .meta({ id: 'TilgangsbegrensningData' });
export const detaljertAngivelseInnbyggerMetadataSchema = z
  .strictObject({
    navngittHelseperson: z.array(tilgangsbegrensningDataSchema).nullable(),
    helseforetak: z.array(tilgangsbegrensningDataSchema).nullable(),
  })
  .meta({ id: 'DetaljertAngivelseInnbyggerMetadata' });

export const samtykkeInnbyggerMetadataSchema = z
  .strictObject({ tidsbegrensning: innbyggerTidsbegrensningSchema })
  .meta({ id: 'SamtykkeInnbyggerMetadata' });
export const reservasjonInnbyggerMetadataSchema = z
  .strictObject({ tidsbegrensning: innbyggerTidsbegrensningSchema })
  .meta({ id: 'ReservasjonInnbyggerMetadata' });
export const tilgangsbegrensningInnbyggerMetadataSchema = z
  .strictObject({
    tidsbegrensning: innbyggerTidsbegrensningSchema,
    detaljertAngivelse: detaljertAngivelseInnbyggerMetadataSchema,
  })
  .meta({ id: 'TilgangsbegrensningInnbyggerMetadata' });

/** The citizen metadata as stored and answered: every field present, null where not given. */
export interface InnbyggerMetadata {
  tidsbegrensning: { perioder: Array<{ fraDato: string | null; tilDato: string | null }> | null };
  detaljertAngivelse?: {
    navngittHelseperson: Array<{ nummer: string | null; navn: string | null }> | null;
    helseforetak: Array<{ nummer: string | null; navn: string | null }> | null;
  };
}

export const tidsbegrensningSchema = z
  .strictObject({
    tidsbegrensetFra: instant.nullable(),
    tidsbegrensetTil: instant.nullable(),
  })
  .meta({ id: 'Tidsbegrensning' });
export const omfangElementSchema = z
  .strictObject({
    omfangKode: z.string().nullable(),
    logiskOmfang: z.string().nullable(),
    presisering: z.string().nullable(),
  })
  .meta({ id: 'OmfangElement' });
export const detaljertAngivelseFasteMetadataSchema = z
  .strictObject({
    kategoriOpplysninger: z.array(z.string()).nullable(),
    rolleTilPasient: z.array(z.string()).nullable(),
  })
  .meta({ id: 'DetaljertAngivelseFasteMetadata' });

export const samtykkeFasteMetadataSchema = z
  .strictObject({
    tidsbegrensning: tidsbegrensningSchema,
    omfangElementer: z.array(omfangElementSchema).nullable(),
  })
  .meta({ id: 'SamtykkeFasteMetadata' });
export const reservasjonFasteMetadataSchema = z
  .strictObject({
    tidsbegrensning: tidsbegrensningSchema,
    omfangElementer: z.array(omfangElementSchema).nullable(),
  })
  .meta({ id: 'ReservasjonFasteMetadata' });
/** The interface does not show the access-restriction scope element; it has OmfangElement's fields here. */
export const tilgangsbegrensningFasteMetadataSchema = z
  .strictObject({
    tidsbegrensning: tidsbegrensningSchema,
    omfangElementer: z.array(omfangElementSchema).nullable(),
    detaljertAngivelse: detaljertAngivelseFasteMetadataSchema,
  })
  .meta({ id: 'TilgangsbegrensningFasteMetadata' });

export const samtykkeMetadataSchema = z
  .strictObject({
    saFasteMetadata: samtykkeFasteMetadataSchema,
    saInnbyggerMetadata: samtykkeInnbyggerMetadataSchema,
  })
  .meta({ id: 'SamtykkeMetadata' });
export const reservasjonMetadataSchema = z
  .strictObject({
    reFasteMetadata: reservasjonFasteMetadataSchema,
    reInnbyggerMetadata: reservasjonInnbyggerMetadataSchema,
  })
  .meta({ id: 'ReservasjonMetadata' });
export const tilgangsbegrensningMetadataSchema = z
  .strictObject({
    tbFasteMetadata: tilgangsbegrensningFasteMetadataSchema,
    tbInnbyggerMetadata: tilgangsbegrensningInnbyggerMetadataSchema,
  })
  .meta({ id: 'TilgangsbegrensningMetadata' });

/** One of saMetadata / reMetadata / tbMetadata is present: the one of the definition's type. */
export const personvernInnstillingV2Schema = z
  .strictObject({
    innbyggerFnr: z.string().nullable(),
    definisjonGuid: z.string().nullable(),
    definisjonNavn: z.string().nullable(),
    partKode: z.string().nullable(),
    typePi: piTypeSchema,
    aktiv: z.boolean(),
    saMetadata: samtykkeMetadataSchema.optional(),
    reMetadata: reservasjonMetadataSchema.optional(),
    tbMetadata: tilgangsbegrensningMetadataSchema.optional(),
    sekvensnummer: z.int().nullable(),
    opprettetTidspunkt: instant.nullable(),
    sistEndretTidspunkt: instant.nullable(),
  })
  .meta({ id: 'PersonvernInnstillingV2' });
export type PersonvernInnstillingV2 = z.infer<typeof personvernInnstillingV2Schema>;

export const settInnbyggersPersonvernInnstillingV2ResponseSchema = z
  .strictObject({
    returKode: z.literal('ok'),
    instansEndret: z.enum(['endret', 'ikkeEndret']),
  })
  .meta({ id: 'SettInnbyggersPersonvernInnstillingResponse' });
export type SettInnbyggersPersonvernInnstillingV2Response = z.infer<
  typeof settInnbyggersPersonvernInnstillingV2ResponseSchema
>;

export const sjekkInnbyggersPiStatusV2ResponseSchema = personvernInnstillingV2Schema;

export const hentInnbyggersPiV2ResponseSchema = z
  .strictObject({ personvernInnstillinger: z.array(personvernInnstillingV2Schema) })
  .meta({ id: 'HentInnbyggersPiV2Response' });
export type HentInnbyggersPiV2Response = z.infer<typeof hentInnbyggersPiV2ResponseSchema>;

export const opplastetBevisV2Schema = z
  .strictObject({
    sekvensnummer: z.int(),
    /** Spelled so in the interface. */
    regsitrertTidspunkt: instant,
    historisk: z.boolean(),
    signertBevisMimeType: z.string().nullable(),
    signertBevisInnhold: z.string().nullable(),
  })
  .meta({ id: 'OpplastetBevisV2' });
export type OpplastetBevisV2 = z.infer<typeof opplastetBevisV2Schema>;

export const hentInnbyggersOpplastedeBevisV2ResponseSchema = z
  .strictObject({ opplastedeBevis: z.array(opplastetBevisV2Schema) })
  .meta({ id: 'HentInnbyggersOpplastedeBevisV2Response' });
export type HentInnbyggersOpplastedeBevisV2Response = z.infer<
  typeof hentInnbyggersOpplastedeBevisV2ResponseSchema
>;

/** One active citizen: the metadata field of the definition's type is present. */
export const personvernInnstillingHentInnbyggereV2Schema = z
  .strictObject({
    innbyggerFnr: z.string(),
    saInnbyggerMetadata: samtykkeInnbyggerMetadataSchema.optional(),
    reInnbyggerMetadata: reservasjonInnbyggerMetadataSchema.optional(),
    tbInnbyggerMetadata: tilgangsbegrensningInnbyggerMetadataSchema.optional(),
    sekvensnummer: z.int(),
    opprettetTidspunkt: instant,
    sistEndretTidspunkt: instant,
  })
  .meta({ id: 'PersonvernInnstillingHentInnbyggereV2' });
export type PersonvernInnstillingHentInnbyggereV2 = z.infer<
  typeof personvernInnstillingHentInnbyggereV2Schema
>;

export const hentInnbyggereAktivePiForDefinisjonV2ResponseSchema = z
  .strictObject({
    definisjonGuid: z.string(),
    definisjonNavn: z.string().nullable(),
    partKode: z.string(),
    typePi: piTypeSchema,
    saFasteMetadata: samtykkeFasteMetadataSchema.optional(),
    reFasteMetadata: reservasjonFasteMetadataSchema.optional(),
    tbFasteMetadata: tilgangsbegrensningFasteMetadataSchema.optional(),
    pagingReference: z.int().min(0).max(INT32_MAX).meta({
      description: 'Cursor of the next page; 0 when this is the last page.',
    }),
    personvernInnstillinger: z.array(personvernInnstillingHentInnbyggereV2Schema),
  })
  .meta({ id: 'HentInnbyggereAktivePiForDefinisjonV2Response' });
export type HentInnbyggereAktivePiForDefinisjonV2Response = z.infer<
  typeof hentInnbyggereAktivePiForDefinisjonV2ResponseSchema
>;

// ---------------------------------------------------------------- replication event

export const SETTING_CHANGED_EVENT_TYPE = 'no.nhp.privacy.setting-changed';
export const PRIVACY_EVENTS_STREAM = 'PRIVACY_EVENTS';
export const PRIVACY_EVENTS_SUBJECTS = 'privacy.events.>';
export const settingChangedSubject = (partKode: string) =>
  `privacy.events.setting-changed.${partKode}`;

export const settingChangedEventDataSchema = z
  .strictObject({
    definisjonGuid: z.string(),
    partKode: z.string(),
    typePi: piTypeSchema,
    innbyggerFnr: z.string(),
    aktiv: z.boolean(),
    sekvensnummer: z.int().min(1),
    sistEndretTidspunkt: instant,
  })
  .meta({ id: 'SettingChangedEventData' });
export type SettingChangedEventData = z.infer<typeof settingChangedEventDataSchema>;
