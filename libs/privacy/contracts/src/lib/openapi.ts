import { COMPONENT_SCHEMA_REF, componentSchemas } from '@nhp/shared-openapi';
import { z } from 'zod';
import { errorResponseSchema } from './error-response';

/**
 * The OpenAPI 3.1 document of privacy-api, built from the same zod schemas that validate requests
 * (z.toJSONSchema, JSON Schema 2020-12: OpenAPI 3.1's dialect). Each area describes its
 * operations as `OperationSpec`s; `buildOpenApiDocument` turns them into paths and components.
 */

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface QueryParameterSpec {
  name: string;
  schema: z.ZodType;
  description?: string;
  /** Default false: the interface declares no parameter required (our additions may). */
  required?: boolean;
}

export interface OperationSpec {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** public: no token; system: a system token with the scope; citizen: a token with `pid`. */
  access: 'public' | 'system' | 'citizen';
  /** The scope kind a system token needs. */
  scope?: 'read' | 'write' | 'admin';
  /** The request body's schema (give it `.meta({ id })` to name its component). */
  body?: z.ZodType;
  query?: readonly QueryParameterSpec[];
  success: { status: number; description: string; schema?: z.ZodType; contentType?: string };
  /** Error statuses answered with ErrorResponse. */
  errors: readonly number[];
  /** Accepts the X-hn-isdebug header (every operation but the health check). */
  debugHeader?: boolean;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

type Json = Record<string, unknown>;

export const REQUEST_MEDIA_TYPES = [
  'application/json',
  'application/json-patch+json',
  'text/json',
  'application/*+json',
] as const;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid (see `code`: EPVK-100400 schema, EPVK-101518 identity number, EPVK-101500 unknown definition, ...).',
  401: 'Missing, malformed, expired or badly signed token or DPoP proof (EPVK-100401); on operations without a 403, also a token lacking the scope (EPVK-100403).',
  403: 'The token lacks the scope or is of the wrong kind (EPVK-100403).',
  404: 'No such path (EPVK-100404).',
  405: 'The path does not serve this method (EPVK-100405); see Allow.',
  413: 'The body is larger than the operation’s limit (EPVK-100413).',
  415: 'The body is not one of the accepted JSON media types (EPVK-100415).',
  429: 'The DPoP key has its share of the proof replay table in use (EPVK-100429): its proofs are refused for the seconds `Retry-After` says; other keys are not held back.',
  500: 'A server error: EPVK-100503 (EndpointIsDown) when the database cannot be reached, EPVK-100500 otherwise.',
  503: 'Not healthy.',
};

function schemaName(schema: z.ZodType): string | undefined {
  const meta = z.globalRegistry.get(schema) as { id?: unknown } | undefined;
  return typeof meta?.id === 'string' ? meta.id : undefined;
}

/** Every schema as a component: named ones under their id, the others under the given key. */
function components(named: Record<string, z.ZodType>): Record<string, unknown> {
  const { defs, properties } = componentSchemas(named, 'input');
  const result: Json = { ...defs };
  for (const [key, schema] of Object.entries(properties)) {
    if (!schemaName(named[key] as z.ZodType)) result[key] = schema;
  }
  return result;
}

function parameterSchema(schema: z.ZodType): Json {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete json['$schema'];
  return json;
}

export function buildOpenApiDocument(
  operations: readonly OperationSpec[],
  info: OpenApiInfo,
): Json & { paths: Record<string, Record<string, Json>>; components: Json } {
  const named: Record<string, z.ZodType> = { ErrorResponse: errorResponseSchema };
  const refOf = (schema: z.ZodType, fallback: string) => {
    const name = schemaName(schema) ?? fallback;
    named[name] = schema;
    return { $ref: `${COMPONENT_SCHEMA_REF}${name}` };
  };

  const paths: Record<string, Record<string, Json>> = {};
  for (const op of operations) {
    const parameters: Json[] = (op.query ?? []).map((q) => ({
      name: q.name,
      in: 'query',
      required: q.required ?? false,
      description: q.description,
      schema: parameterSchema(q.schema),
    }));
    if (op.debugHeader !== false && op.access !== 'public') {
      parameters.push({ $ref: '#/components/parameters/XHnIsDebug' });
    }
    const responses: Json = {};
    const success: Json = { description: op.success.description };
    if (op.success.schema) {
      success['content'] = {
        [op.success.contentType ?? 'application/json']: {
          schema: refOf(op.success.schema, `${op.operationId}Response`),
        },
      };
    }
    responses[String(op.success.status)] = success;
    // Any operation with a body may also meet its size limit and the content-type rule, and any
    // operation that needs a token a DPoP key over its share of the replay table.
    const errors = [
      ...new Set([
        ...op.errors,
        ...(op.body ? [413, 415] : []),
        ...(op.access === 'public' ? [] : [429]),
      ]),
    ];
    for (const status of errors) {
      responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
    }
    const operation: Json = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      responses,
    };
    const notes: string[] = [];
    if (op.description) notes.push(op.description);
    if (op.access === 'system' && op.scope) {
      notes.push(`Needs a token with the scope \`<audience>/personverninnstilling_${op.scope}\`.`);
    }
    if (op.access === 'citizen') {
      notes.push('Needs a token in a citizen’s context (a `pid` claim); no scope needed.');
    }
    if (notes.length > 0) operation['description'] = notes.join('\n\n');
    if (parameters.length > 0) operation['parameters'] = parameters;
    if (op.access === 'public') operation['security'] = [];
    if (op.body) {
      const schema = refOf(op.body, `${op.operationId}Request`);
      operation['requestBody'] = {
        required: false,
        content: Object.fromEntries(REQUEST_MEDIA_TYPES.map((type) => [type, { schema }])),
      };
    }
    (paths[op.path] ??= {})[op.method] = operation;
  }

  const errorResponses = Object.fromEntries(
    Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => [
      `Error${status}`,
      {
        description,
        headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } },
        content: {
          'application/json': { schema: { $ref: `${COMPONENT_SCHEMA_REF}ErrorResponse` } },
        },
      },
    ]),
  );

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info,
    servers: [{ url: '/', description: 'This server' }],
    security: [{ Bearer: [] }, { DPoP: [] }],
    paths,
    components: {
      securitySchemes: {
        Bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An access token (JWT) in `Authorization: Bearer <token>`.',
        },
        DPoP: {
          type: 'http',
          scheme: 'dpop',
          bearerFormat: 'JWT',
          description:
            'A DPoP-bound access token (RFC 9449) in `Authorization: DPoP <token>`, with a proof JWT in the `DPoP` header for this method and URL.',
        },
      },
      parameters: {
        XHnIsDebug: {
          name: 'X-hn-isdebug',
          in: 'header',
          required: false,
          description:
            '`true` or `false` (any letter case; anything else is 400). `true` adds the invalid fields and the request id to error messages where the service allows debugging.',
          schema: { type: 'boolean' },
        },
      },
      headers: {
        XRequestId: {
          description: 'The request id (yours when you sent a plain X-Request-Id).',
          schema: { type: 'string' },
        },
      },
      responses: errorResponses,
      schemas: components(named),
    },
  };
}
