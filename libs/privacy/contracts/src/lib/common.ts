import { z } from 'zod';

/**
 * Building blocks of privacy-api's contracts. The interface declares no field required and marks
 * most strings nullable; clients omit null fields. So a field is `.optional()` everywhere and
 * `.nullable()` where the interface says so. Every object is strict: an unknown property fails
 * validation, naming it.
 */

/**
 * A GUID in its textual form (8-4-4-4-12 hex digits), any version: .NET clients send GUIDs that
 * are not always RFC 9562 UUIDs. Compared in lower case everywhere.
 */
export const guidSchema = z.guid();

/** A string the interface marks nullable, absent or null alike. */
export const nullableString = () => z.string().nullable().optional();

/** int32, as the interface types integers. */
export const int32Schema = z.int32();

/** Base request and base response: an empty object (nothing else accepted). */
export const emptyObjectSchema = z.strictObject({}).meta({
  id: 'EmptyObject',
  description: 'An empty object: the success body of operations that return nothing else.',
});
export type EmptyObject = z.infer<typeof emptyObjectSchema>;
