import { z } from 'zod';
import { nullableString } from './common';

/**
 * A party's code: letters, digits, '-' and '_'. Narrower than the interface's string because the
 * code is part of the NATS subjects that carry the party's events (no '.', '*', '>' or spaces).
 */
export const PART_KODE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A party's code wherever a request names one that must exist: no party can have any other, so
 * anything else is refused as malformed before it reaches a lookup (where, URI-encoded as part of
 * a key, a code with an unpaired surrogate used to throw).
 */
export const partKodeSchema = z
  .string()
  .regex(PART_KODE_PATTERN, 'expected 1-64 letters (A-Z), digits, "-" or "_"');

/** Party: CreatePartRequest and UpdatePartRequest share this shape. partKode identifies the party. */
export const partRequestSchema = z
  .strictObject({
    partKode: partKodeSchema
      .nullable()
      .optional()
      .meta({ description: 'Identifies the party (needed on create and update).' }),
    navn: nullableString(),
    kortNavn: nullableString(),
    beskrivelse: nullableString(),
    uri: nullableString(),
  })
  .meta({ id: 'PartRequest', description: 'A party (CreatePartRequest, UpdatePartRequest).' });

export type PartRequest = z.infer<typeof partRequestSchema>;
