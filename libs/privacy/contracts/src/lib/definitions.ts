import { z } from 'zod';
import { guidSchema, int32Schema, nullableString } from './common';
import { partKodeSchema } from './parts';

export const relasjonSchema = z
  .strictObject({
    definisjonGuid: guidSchema.optional().meta({ description: 'An existing definition.' }),
    relasjonType: nullableString(),
    beskrivelse: nullableString(),
  })
  .meta({ id: 'Relasjon', description: 'A relation to another definition.' });

/** POST /innstillingdefinisjon/v1. definisjonMalGuid, definisjonGuid and partKode are needed. */
export const createDefinitionRequestSchema = z
  .strictObject({
    definisjonMalGuid: guidSchema
      .optional()
      .meta({ description: 'The template: fixes the type and the fixed metadata.' }),
    definisjonGuid: guidSchema.optional().meta({ description: 'The new definition’s id.' }),
    partKode: nullableString().meta({ description: 'The owning party (must exist).' }),
    navn: nullableString(),
    beskrivelse: nullableString(),
    visning: nullableString(),
    fullstendigTekstInnhold: nullableString(),
    kravTilLesingAvFullstendigTekst: z.boolean().optional().meta({ description: 'Default false.' }),
    sortering: int32Schema.nullable().optional(),
    replikering: z
      .boolean()
      .optional()
      .meta({ description: 'Publish changes of citizens’ settings as events. Default false.' }),
    relasjoner: z.array(relasjonSchema).nullable().optional(),
  })
  .meta({ id: 'CreateDefinitionRequest', description: 'Creates a definition from a template.' });

export const DEFINITION_STATUS_PATTERN = /^(aktiv|inaktiv)$/i;

/** PATCH /innstillingdefinisjon/v1: definisjonGuid identifies; null or absent leaves a field as it is. */
export const updateDefinitionRequestSchema = z
  .strictObject({
    definisjonGuid: guidSchema.optional().meta({ description: 'The definition to change.' }),
    visning: nullableString(),
    kravTilLesingAvFullstendigTekst: z.boolean().nullable().optional(),
    sortering: int32Schema.nullable().optional(),
    replikering: z.boolean().nullable().optional(),
    status: z
      .string()
      .regex(DEFINITION_STATUS_PATTERN, 'expected aktiv or inaktiv')
      .nullable()
      .optional()
      .meta({ description: '`aktiv` or `inaktiv` (any letter case).' }),
  })
  .meta({ id: 'UpdateDefinitionRequest', description: 'Changes a definition’s updatable fields.' });

export type RelasjonRequest = z.infer<typeof relasjonSchema>;
export type CreateDefinitionRequest = z.infer<typeof createDefinitionRequestSchema>;
export type UpdateDefinitionRequest = z.infer<typeof updateDefinitionRequestSchema>;

// ---------------------------------------------------------------- listing (an addition for callers)

/** GET /innstillingdefinisjon/v1?partKode=KODE: the party whose definitions to list (required). */
export const hentInnstillingDefinisjonerQuerySchema = z
  .strictObject({
    partKode: partKodeSchema.meta({ description: 'The party whose definitions to list.' }),
  })
  .meta({ id: 'HentInnstillingDefinisjonerQuery' });

/** A definition as created (plus its status and type), every field present. */
export const innstillingDefinisjonSchema = z
  .strictObject({
    definisjonGuid: z.string(),
    definisjonMalGuid: z.string(),
    partKode: z.string(),
    navn: z.string().nullable(),
    beskrivelse: z.string().nullable(),
    visning: z.string().nullable(),
    fullstendigTekstInnhold: z.string().nullable(),
    kravTilLesingAvFullstendigTekst: z.boolean(),
    sortering: z.int32().nullable(),
    replikering: z.boolean().meta({
      description: 'Changes of citizens’ settings of this definition are published as events.',
    }),
    relasjoner: z.array(
      z.strictObject({
        definisjonGuid: z.string(),
        relasjonType: z.string().nullable(),
        beskrivelse: z.string().nullable(),
      }),
    ),
    status: z.enum(['aktiv', 'inaktiv']),
    typePi: z.enum(['samtykke', 'reservasjon', 'tilgangsbegrensning']),
  })
  .meta({ id: 'InnstillingDefinisjon' });

export const hentInnstillingDefinisjonerResponseSchema = z
  .strictObject({
    partKode: z.string(),
    definisjoner: z.array(innstillingDefinisjonSchema).meta({
      description:
        'The party’s definitions the caller’s grants let it read (admin scope: all), by definisjonGuid.',
    }),
  })
  .meta({ id: 'HentInnstillingDefinisjonerResponse' });

export type HentInnstillingDefinisjonerQuery = z.infer<
  typeof hentInnstillingDefinisjonerQuerySchema
>;
export type InnstillingDefinisjon = z.infer<typeof innstillingDefinisjonSchema>;
export type HentInnstillingDefinisjonerResponse = z.infer<
  typeof hentInnstillingDefinisjonerResponseSchema
>;
