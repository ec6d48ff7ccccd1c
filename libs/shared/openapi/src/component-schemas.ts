import { z } from 'zod';

/** Where OpenAPI 3.1 keeps named schemas: every `$ref` of a generated document points here. */
export const COMPONENT_SCHEMA_REF = '#/components/schemas/';

/** The JSON Schema of a set of zod schemas, ready to be an OpenAPI document's components. */
export interface ComponentSchemas {
  /** Every named schema (`.meta({ id })`) the given ones are or contain, by its id. */
  defs: Record<string, unknown>;
  /** Each given schema under its key: a `$ref` for a named one, the schema itself otherwise. */
  properties: Record<string, unknown>;
}

/**
 * The given zod schemas as JSON Schema 2020-12 (OpenAPI 3.1's dialect), converted together so that
 * a part they share becomes one named component, referenced wherever it occurs. zod writes those
 * references as `#/$defs/<id>`; in an OpenAPI document they live under `#/components/schemas/`,
 * so every reference is rewritten to point there. `io` says which side of a transform to
 * describe: `input` for request bodies, `output` for what a service sends.
 */
export function componentSchemas(
  schemas: Record<string, z.ZodType>,
  io: 'input' | 'output',
): ComponentSchemas {
  const all = z.toJSONSchema(z.object(schemas), {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as { $defs?: Record<string, unknown>; properties?: Record<string, unknown> };
  return {
    defs: pointAtComponents(all.$defs ?? {}),
    properties: pointAtComponents(all.properties ?? {}),
  };
}

function pointAtComponents(json: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(json).replaceAll('"#/$defs/', `"${COMPONENT_SCHEMA_REF}`),
  ) as Record<string, unknown>;
}
