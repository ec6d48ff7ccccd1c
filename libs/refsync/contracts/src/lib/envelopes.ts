import { z } from 'zod';
import { type Dataset, itemDataSchemas } from './item-data';

/**
 * The factories are memoised per data schema: each result carries a component id for the OpenAPI
 * document, and zod refuses two different schemas with one id in the same conversion, so every
 * caller must get the same instance back.
 */
function memoise<S extends z.ZodType>(build: (data: z.ZodType, baseId: string | undefined) => S) {
  const cache = new WeakMap<z.ZodType, S>();
  return (dataSchema: z.ZodType): S => {
    let schema = cache.get(dataSchema);
    if (!schema) {
      const meta = z.globalRegistry.get(dataSchema);
      schema = build(dataSchema, typeof meta?.id === 'string' ? meta.id : undefined);
      cache.set(dataSchema, schema);
    }
    return schema;
  };
}

function withMeta<S extends z.ZodType>(schema: S, id: string | undefined, description: string): S {
  return (id ? schema.meta({ id, description }) : schema.meta({ description })) as S;
}

export const currentVersionSchema = z.int().min(0).meta({
  description:
    "The server's current data version; increases by one with each synchronisation that changes data. 0 means no data yet.",
});

export const itemVersionSchema = z
  .int()
  .min(1)
  .meta({ description: 'The data version at which the item last changed.' });

export const lastChangedSchema = z.iso.datetime().meta({
  description: 'When the item last changed: ISO 8601 UTC with milliseconds.',
  examples: ['2026-11-22T02:00:03.125Z'],
});

const buildItemEntry = <T extends z.ZodType>(data: T, baseId: string | undefined) =>
  withMeta(
    z.strictObject({
      data,
      version: itemVersionSchema,
      lastChanged: lastChangedSchema,
      isDeleted: z.boolean(),
    }),
    baseId && `${baseId}Item`,
    'One item of the primary spelling: data with its version, change time and deletion flag.',
  );
const buildAltEntry = <T extends z.ZodType>(data: T, baseId: string | undefined) =>
  withMeta(
    z.strictObject({ data, isDeleted: z.boolean() }),
    baseId && `${baseId}AltEntry`,
    'One entry of the alternative spelling: data and deletion flag.',
  );

const itemEntryCached = memoise((data, id) => buildItemEntry(data, id));
const altEntryCached = memoise((data, id) => buildAltEntry(data, id));
const envelopeCached = memoise((data, id) =>
  withMeta(
    z.strictObject({ currentVersion: currentVersionSchema, items: z.array(itemEntryCached(data)) }),
    id && `${id}Envelope`,
    'Response of the primary spelling: the current data version and the selected items, ordered by version, then id.',
  ),
);
const altEnvelopeCached = memoise((data, id) =>
  withMeta(
    z.strictObject({
      currentVersion: currentVersionSchema,
      entries: z.array(altEntryCached(data)),
    }),
    id && `${id}AltEnvelope`,
    'Response of the alternative spelling: the current data version and the selected entries, ordered by version, then id.',
  ),
);

export type ItemEntrySchema<T extends z.ZodType> = ReturnType<typeof buildItemEntry<T>>;
export type AltEntrySchema<T extends z.ZodType> = ReturnType<typeof buildAltEntry<T>>;
export type EnvelopeSchema<T extends z.ZodType> = z.ZodObject<
  { currentVersion: typeof currentVersionSchema; items: z.ZodArray<ItemEntrySchema<T>> },
  z.core.$strict
>;
export type AltEnvelopeSchema<T extends z.ZodType> = z.ZodObject<
  { currentVersion: typeof currentVersionSchema; entries: z.ZodArray<AltEntrySchema<T>> },
  z.core.$strict
>;

/** `{data, version, lastChanged, isDeleted}`, strict. Same instance for the same data schema. */
export const itemEntrySchema = <T extends z.ZodType>(dataSchema: T): ItemEntrySchema<T> =>
  itemEntryCached(dataSchema) as unknown as ItemEntrySchema<T>;
/** `{data, isDeleted}`, strict. Same instance for the same data schema. */
export const altEntrySchema = <T extends z.ZodType>(dataSchema: T): AltEntrySchema<T> =>
  altEntryCached(dataSchema) as unknown as AltEntrySchema<T>;
/** `{currentVersion, items}`, strict. Same instance for the same data schema. */
export const envelopeSchema = <T extends z.ZodType>(dataSchema: T): EnvelopeSchema<T> =>
  envelopeCached(dataSchema) as unknown as EnvelopeSchema<T>;
/** `{currentVersion, entries}`, strict. Same instance for the same data schema. */
export const altEnvelopeSchema = <T extends z.ZodType>(dataSchema: T): AltEnvelopeSchema<T> =>
  altEnvelopeCached(dataSchema) as unknown as AltEnvelopeSchema<T>;

type DataSchemas = typeof itemDataSchemas;

/** The primary-spelling envelope schema of each dataset. */
export const envelopeSchemas = {
  treatmentGroup: envelopeSchema(itemDataSchemas.treatmentGroup),
  reimbursementGroup: envelopeSchema(itemDataSchemas.reimbursementGroup),
} as { [D in Dataset]: EnvelopeSchema<DataSchemas[D]> };

/** The alternative-spelling envelope schema of each dataset. */
export const altEnvelopeSchemas = {
  treatmentGroup: altEnvelopeSchema(itemDataSchemas.treatmentGroup),
  reimbursementGroup: altEnvelopeSchema(itemDataSchemas.reimbursementGroup),
} as { [D in Dataset]: AltEnvelopeSchema<DataSchemas[D]> };

export type ItemEntry<D extends Dataset = Dataset> = z.infer<ItemEntrySchema<DataSchemas[D]>>;
export type AltEntry<D extends Dataset = Dataset> = z.infer<AltEntrySchema<DataSchemas[D]>>;
export type Envelope<D extends Dataset = Dataset> = z.infer<EnvelopeSchema<DataSchemas[D]>>;
export type AltEnvelope<D extends Dataset = Dataset> = z.infer<AltEnvelopeSchema<DataSchemas[D]>>;
