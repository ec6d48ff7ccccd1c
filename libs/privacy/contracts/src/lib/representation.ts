import { z } from 'zod';

/** Representation relationships: whom the calling citizen represents or is represented by. */

export const representasjonsforholdSchema = z
  .strictObject({
    eksternProfilGuid: z.guid(),
    fornavn: z.string().nullable(),
    mellomnavn: z.string().nullable(),
    etternavn: z.string().nullable(),
    representasjonsforholdType: z.string().nullable(),
  })
  .meta({ id: 'Representasjonsforhold' });
export type Representasjonsforhold = z.infer<typeof representasjonsforholdSchema>;

export const tilleggsinfoSchema = z
  .strictObject({
    harBarnMedAnnenAdresse: z.boolean(),
    harBarnOver11: z.boolean(),
    harBarnOver16: z.boolean(),
  })
  .meta({
    id: 'Tilleggsinfo',
    description:
      'Computed when asked: whether the caller is a parent (type foreldre) of a child aged 11 / 16 or more today, or of a child registered at another address.',
  });
export type Tilleggsinfo = z.infer<typeof tilleggsinfoSchema>;

export const hentRepresentasjonsforholdResponseSchema = z
  .strictObject({
    representasjonsforhold: z.array(representasjonsforholdSchema).nullable(),
    tilleggsinfo: tilleggsinfoSchema,
  })
  .meta({ id: 'HentRepresentasjonsforholdResponse' });
export type HentRepresentasjonsforholdResponse = z.infer<
  typeof hentRepresentasjonsforholdResponseSchema
>;

/** The relationship type whose other person is the caller's child (tilleggsinfo counts these). */
export const FORELDRE_TYPE = 'foreldre';

/**
 * One line of the file `privacy-admin import-representation` reads (NDJSON): `fnr` represents,
 * or is represented by, the person `annenFnr` whose profile is given. Identity numbers are checked
 * by the domain (their rules need configuration).
 */
const name = z.string().max(200);

export const representationImportLineSchema = z.strictObject({
  fnr: z.string().min(1),
  annenFnr: z.string().min(1),
  eksternProfilGuid: z.guid(),
  fornavn: name,
  mellomnavn: name.nullish(),
  etternavn: name,
  representasjonsforholdType: z.string().min(1).max(100),
  /**
   * The other person (a child) lives at another address than the caller: true, or the address
   * itself (a non-empty text counts as true).
   */
  annenAdresse: z.union([z.boolean(), z.string().max(500)]).nullish(),
});
export type RepresentationImportLine = z.infer<typeof representationImportLineSchema>;
