import {
  buildOpenApiDocument,
  createDefinitionRequestSchema,
  emptyObjectSchema,
  partRequestSchema,
  updateDefinitionRequestSchema,
  type OperationSpec,
} from '@nhp/privacy-contracts';

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

const STANDARD_ERRORS = [400, 401, 500] as const;

/** Parties and definitions (the core area). */
const coreOperations: OperationSpec[] = [
  {
    method: 'post',
    path: '/part/v1',
    operationId: 'createPart',
    summary: 'Create a party',
    description: 'An existing partKode is 400 EPVK-102409.',
    tag: 'parties',
    access: 'system',
    scope: 'admin',
    body: partRequestSchema,
    success: { status: 201, description: 'Created.', schema: emptyObjectSchema },
    errors: [400, 401, 403, 500],
  },
  {
    method: 'put',
    path: '/part/v1',
    operationId: 'updatePart',
    summary: 'Update a party (its fields are replaced)',
    description: 'An unknown partKode is 400 EPVK-102404.',
    tag: 'parties',
    access: 'system',
    scope: 'admin',
    body: partRequestSchema,
    success: { status: 204, description: 'Updated.' },
    errors: [400, 401, 403, 500],
  },
  {
    method: 'post',
    path: '/innstillingdefinisjon/v1',
    operationId: 'createDefinition',
    summary: 'Create a privacy setting definition from a template',
    description:
      'definisjonMalGuid, definisjonGuid and partKode are needed. Unknown template or related definition: EPVK-103404; existing definisjonGuid: EPVK-103409; unknown party: EPVK-102404. A token without the admin scope is 401 EPVK-100403.',
    tag: 'definitions',
    access: 'system',
    scope: 'admin',
    body: createDefinitionRequestSchema,
    success: { status: 201, description: 'Created.', schema: emptyObjectSchema },
    errors: STANDARD_ERRORS,
  },
  {
    method: 'patch',
    path: '/innstillingdefinisjon/v1',
    operationId: 'updateDefinition',
    summary: 'Change a definition’s updatable fields',
    description:
      'definisjonGuid identifies the definition (unknown: EPVK-101500); null or absent fields stay as they are; status is `aktiv` or `inaktiv`. A token without the admin scope is 401 EPVK-100403.',
    tag: 'definitions',
    access: 'system',
    scope: 'admin',
    body: updateDefinitionRequestSchema,
    success: { status: 204, description: 'Updated.' },
    errors: STANDARD_ERRORS,
  },
];

const publicOperations: OperationSpec[] = [
  {
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Health: 200 when MongoDB answers and NATS is connected, 503 otherwise (no body)',
    tag: 'probes',
    access: 'public',
    success: { status: 200, description: 'Healthy.' },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    summary: 'This OpenAPI 3.1 document (no token needed: it holds no data)',
    tag: 'documentation',
    access: 'public',
    success: { status: 200, description: 'The document.' },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'apiReference',
    summary: 'A readable API reference generated from this document (no token needed)',
    tag: 'documentation',
    access: 'public',
    success: { status: 200, description: 'HTML page, self-contained.' },
    errors: [],
  },
];

/** Every area's operations; an area appends its list here. */
export const OPERATIONS: readonly OperationSpec[] = [...coreOperations, ...publicOperations];

let cached: OpenApiDocument | undefined;

/** Built once per process from the contracts; the same object is served on every request. */
export function openApiDocument(): OpenApiDocument {
  cached ??= buildOpenApiDocument(OPERATIONS, {
    title: 'privacy-api: citizens’ privacy settings',
    version: '1.0.0',
    description: [
      'Citizens’ privacy settings (consent, reservation, access restriction), inclusions, setting definitions owned by parties, representation relationships and youth-app consent.',
      'Every operation but the health check and this description needs an access token (JWT) as `Authorization: Bearer` or `Authorization: DPoP` with a DPoP proof. Scopes are `<audience>/personverninnstilling_read`, `_write` and `_admin`.',
      'Request bodies are JSON (application/json, application/json-patch+json, text/json or application/*+json); every object rejects properties it does not list. Paths match in any letter case.',
      'Errors are ErrorResponse `{code, message, errorCategory}` with the request id in `X-Request-Id`.',
    ].join('\n\n'),
  });
  return cached;
}
