import { z } from 'zod';
import { guidSchema, int32Schema, nullableString } from './common';

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
