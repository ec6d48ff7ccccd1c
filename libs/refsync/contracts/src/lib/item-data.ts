import { z } from 'zod';

/** The two datasets the service publishes; also the path segment of the primary spelling. */
export const datasetSchema = z.enum(['treatmentGroup', 'reimbursementGroup']).meta({
  id: 'Dataset',
  description: 'A published dataset: treatment groups or reimbursement groups.',
});
export type Dataset = z.infer<typeof datasetSchema>;
export const DATASETS: readonly Dataset[] = datasetSchema.options;

export const codingSchema = z
  .strictObject({
    system: z
      .string()
      .meta({ description: 'Code system, e.g. urn:oid:2.16.578.1.12.4.1.1.7170 (ICPC-2).' }),
    code: z.string(),
    display: z.string(),
  })
  .meta({ id: 'Coding', description: 'One code from a code system, with its display text.' });
export type Coding = z.infer<typeof codingSchema>;

export const codedConceptSchema = z
  .strictObject({ coding: z.array(codingSchema) })
  .meta({ id: 'CodedConcept', description: 'A concept expressed as one or more codings.' });
export type CodedConcept = z.infer<typeof codedConceptSchema>;

export const identifierSchema = z
  .strictObject({ system: z.string(), value: z.string() })
  .meta({ id: 'Identifier', description: 'A business identifier, e.g. a 6-digit varenummer.' });
export type Identifier = z.infer<typeof identifierSchema>;

export const medicineReferenceSchema = z
  .strictObject({
    reference: z.string().nullable(),
    type: z.string(),
    identifier: identifierSchema,
    display: z.string().nullable(),
  })
  .meta({ id: 'MedicineReference', description: 'A medicine covered by a reimbursement group.' });
export type MedicineReference = z.infer<typeof medicineReferenceSchema>;

/**
 * Strict on purpose: the interface lists exactly these fields, so anything else from upstream is an
 * upstream error the importer must report rather than silently publish.
 */
export const reimbursementGroupDataSchema = z
  .strictObject({
    id: z.string().min(1),
    legalBasis: codedConceptSchema,
    indications: z.array(codedConceptSchema),
    medicines: z.array(medicineReferenceSchema).meta({
      description: 'Empty when upstream supplies no article number for the authorisation.',
    }),
  })
  .meta({
    id: 'ReimbursementGroup',
    description: 'A reimbursement group: legal basis, indications and covered medicines.',
  });
export type ReimbursementGroupData = z.infer<typeof reimbursementGroupDataSchema>;

/**
 * Loose on purpose: the complete field list is "not shown" in the interface, so every field
 * upstream supplies beyond id and name is kept and returned as it came.
 */
export const treatmentGroupDataSchema = z
  .looseObject({
    id: z.string().min(1),
    name: z.string().min(1),
  })
  .meta({
    id: 'TreatmentGroup',
    description:
      'A treatment group. Carries at least id and name; other upstream fields are returned as supplied.',
  });
export type TreatmentGroupData = z.infer<typeof treatmentGroupDataSchema>;

export const itemDataSchemas = {
  treatmentGroup: treatmentGroupDataSchema,
  reimbursementGroup: reimbursementGroupDataSchema,
} as const satisfies Record<Dataset, z.ZodType>;

/** The data type of one dataset's items, e.g. `ItemDataOf<'reimbursementGroup'>`. */
export type ItemDataOf<D extends Dataset> = z.infer<(typeof itemDataSchemas)[D]>;
/** Any item's data. */
export type ItemData = ItemDataOf<Dataset>;
