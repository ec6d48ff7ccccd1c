import { z } from 'zod';

/**
 * Inclusions (SettInkluderingRequest): a citizen included in a party's definition, e.g. a study.
 * The request shape is also the success response body.
 */
export const INKLUDERING_TYPES = ['Inkludert', 'Deltager', 'Oppfort'] as const;
export type InkluderingType = (typeof INKLUDERING_TYPES)[number];

const bySpelling = new Map(INKLUDERING_TYPES.map((t) => [t.toLowerCase(), t]));

/**
 * The interface's spelling of an inclusion type given in any letter case (clients send e.g.
 * "inkludert"); undefined for anything else.
 */
export function canonicalInkluderingType(value: string): InkluderingType | undefined {
  return bySpelling.get(value.toLowerCase());
}

/**
 * Accepted in any letter case; the OpenAPI document lists the interface's spelling. A refinement
 * rather than a transform keeps the schema representable as JSON Schema; the use case canonicalises.
 */
export const inkluderingTypeInputSchema = z
  .string()
  .refine((v) => canonicalInkluderingType(v) !== undefined, {
    message: `expected one of ${INKLUDERING_TYPES.join(', ')} (any letter case)`,
  })
  .meta({
    description: 'Inclusion type; accepted in any letter case, answered as spelled here.',
    enum: [...INKLUDERING_TYPES],
  });

export const inkluderingTypeSchema = z.enum(INKLUDERING_TYPES).meta({ id: 'InkluderingType' });

/** 8-4-4-4-12 hex digits; any version (clients' GUIDs are not always RFC 4122 UUIDs). */
const guidSchema = z.guid();

/**
 * The interface marks every field nullable and none required; like the settings operation, the
 * service needs the citizen, the party, the definition and the type, so those are required (400
 * EPVK-100400 naming the field when missing or null). `aktiv` may be omitted or null: true.
 */
export const settInkluderingRequestSchema = z
  .strictObject({
    innbyggerFnr: z.string().meta({ description: "The citizen's national identity number." }),
    partKode: z.string().meta({ description: 'The party that owns the definition.' }),
    personvernInnstillingDefinisjonId: guidSchema.meta({
      description: 'The definition the inclusion is for (definisjonGuid).',
    }),
    inkluderingType: inkluderingTypeInputSchema,
    aktiv: z.boolean().nullish().meta({ description: 'false ends the inclusion; default true.' }),
  })
  .meta({ id: 'SettInkluderingRequest' });
export type SettInkluderingRequest = z.infer<typeof settInkluderingRequestSchema>;

/** The success response: the request in its canonical form (type spelled as the interface does). */
export const settInkluderingResponseSchema = z
  .strictObject({
    innbyggerFnr: z.string().nullable(),
    partKode: z.string().nullable(),
    personvernInnstillingDefinisjonId: guidSchema.nullable(),
    inkluderingType: inkluderingTypeSchema,
    aktiv: z.boolean().nullable(),
  })
  .meta({ id: 'SettInkluderingResponse' });
export type SettInkluderingResponse = z.infer<typeof settInkluderingResponseSchema>;
