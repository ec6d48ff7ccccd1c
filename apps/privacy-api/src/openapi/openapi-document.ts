import {
  buildOpenApiDocument,
  createDefinitionRequestSchema,
  emptyObjectSchema,
  guidSchema,
  hentInnbyggereAktivePiForDefinisjonV2ResponseSchema,
  hentInnstillingDefinisjonerResponseSchema,
  partKodeSchema,
  hentInnbyggersOpplastedeBevisV2RequestSchema,
  hentInnbyggersOpplastedeBevisV2ResponseSchema,
  hentInnbyggersPiV2RequestSchema,
  hentInnbyggersPiV2ResponseSchema,
  hentRepresentasjonsforholdResponseSchema,
  int32Schema,
  partRequestSchema,
  settInkluderingRequestSchema,
  settInkluderingResponseSchema,
  settInnbyggersPersonvernInnstillingV2RequestSchema,
  settInnbyggersPersonvernInnstillingV2ResponseSchema,
  sjekkInnbyggersPiStatusV2RequestSchema,
  sjekkInnbyggersPiStatusV2ResponseSchema,
  updateDefinitionRequestSchema,
  type OperationSpec,
} from '@nhp/privacy-contracts';
import { z } from 'zod';

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
    method: 'get',
    path: '/innstillingdefinisjon/v1',
    operationId: 'hentInnstillingDefinisjoner',
    summary: 'The definitions of a party that the client may read',
    description:
      'Not in the interface document: an addition for callers that keep a copy, so that they know which definitions to walk. partKode is required; an unknown party is 400 EPVK-102404. Without the party’s read grant the list is empty (admin scope: every definition). A token without the read scope is 401 EPVK-100403.',
    tag: 'definitions',
    access: 'system',
    scope: 'read',
    query: [{ name: 'partKode', schema: partKodeSchema, required: true }],
    success: {
      status: 200,
      description: 'The definitions, by definisjonGuid.',
      schema: hentInnstillingDefinisjonerResponseSchema,
    },
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

const SETTINGS = '/personverninnstillinger';

/** Citizens' settings v2: read scope (write to set) and the party's grant. */
const settingsOperations: OperationSpec[] = [
  {
    method: 'post',
    path: `${SETTINGS}/settinnbyggerspersonverninnstilling/v2`,
    operationId: 'settInnbyggersPersonvernInnstillingV2',
    summary: 'Set a citizen’s privacy setting (with an optional signed proof)',
    description:
      'Needs the party’s write grant. The body may be up to 6 MiB (a proof of up to 4 MiB, base64). Answers `ikkeEndret` when nothing changes.',
    tag: 'settings',
    access: 'system',
    scope: 'write',
    body: settInnbyggersPersonvernInnstillingV2RequestSchema,
    success: {
      status: 200,
      description: 'Stored (or unchanged).',
      schema: settInnbyggersPersonvernInnstillingV2ResponseSchema,
    },
    errors: STANDARD_ERRORS,
  },
  {
    method: 'post',
    path: `${SETTINGS}/sjekkinnbyggerspistatus/v2`,
    operationId: 'sjekkInnbyggersPiStatusV2',
    summary: 'A citizen’s current setting of one definition',
    description: 'Needs the party’s read grant.',
    tag: 'settings',
    access: 'system',
    scope: 'read',
    body: sjekkInnbyggersPiStatusV2RequestSchema,
    success: {
      status: 200,
      description: 'The setting (aktiv false when the citizen has none).',
      schema: sjekkInnbyggersPiStatusV2ResponseSchema,
    },
    errors: STANDARD_ERRORS,
  },
  {
    method: 'post',
    path: `${SETTINGS}/hentinnbyggerspiforpart/v2`,
    operationId: 'hentInnbyggersPiForPartV2',
    summary: 'A citizen’s settings of every definition of a party the client may read',
    tag: 'settings',
    access: 'system',
    scope: 'read',
    body: hentInnbyggersPiV2RequestSchema,
    success: {
      status: 200,
      description: 'The settings.',
      schema: hentInnbyggersPiV2ResponseSchema,
    },
    errors: STANDARD_ERRORS,
  },
  {
    method: 'get',
    path: `${SETTINGS}/hentinnbyggereaktivepifordefinisjon/v2`,
    operationId: 'hentInnbyggereAktivePiForDefinisjonV2',
    summary: 'The citizens whose setting of a definition is active, a page at a time',
    description:
      'Send pagingReference 0 (or none) first, then the value returned; 0 returned means the last page.',
    tag: 'settings',
    access: 'system',
    scope: 'read',
    query: [
      { name: 'definisjonGuid', schema: guidSchema },
      { name: 'partKode', schema: z.string() },
      { name: 'pagingReference', schema: int32Schema.min(0) },
    ],
    success: {
      status: 200,
      description: 'One page.',
      schema: hentInnbyggereAktivePiForDefinisjonV2ResponseSchema,
    },
    errors: STANDARD_ERRORS,
  },
  {
    method: 'post',
    path: `${SETTINGS}/hentinnbyggersopplastedebevis/v2`,
    operationId: 'hentInnbyggersOpplastedeBevisV2',
    summary: 'The proofs a citizen’s setting of a definition was given with',
    tag: 'settings',
    access: 'system',
    scope: 'read',
    body: hentInnbyggersOpplastedeBevisV2RequestSchema,
    success: {
      status: 200,
      description: 'The proofs by sekvensnummer.',
      schema: hentInnbyggersOpplastedeBevisV2ResponseSchema,
    },
    errors: STANDARD_ERRORS,
  },
];

/** Inclusions (two spellings), representation relationships and the youth-app consent. */
const citizenOperations: OperationSpec[] = [
  ...(['/v1/settinnbyggersinkludering', '/settinnbyggersinkludering/v1'] as const).map(
    (path, i): OperationSpec => ({
      method: 'post',
      path,
      operationId: i === 0 ? 'settInnbyggersInkludering' : 'settInnbyggersInkluderingV1',
      summary: 'Include a citizen (or end an inclusion with aktiv false)',
      description: 'Needs the party’s write grant. Both spellings of the path behave alike.',
      tag: 'inclusions',
      access: 'system',
      scope: 'write',
      body: settInkluderingRequestSchema,
      success: {
        status: 200,
        description: 'The inclusion as stored.',
        schema: settInkluderingResponseSchema,
      },
      errors: STANDARD_ERRORS,
    }),
  ),
  {
    method: 'get',
    path: '/representasjonsforhold/v1',
    operationId: 'hentRepresentasjonsforhold',
    summary: 'Whom the calling citizen represents or is represented by',
    tag: 'representation',
    access: 'citizen',
    success: {
      status: 200,
      description: 'The relationships.',
      schema: hentRepresentasjonsforholdResponseSchema,
    },
    errors: [400, 401, 403, 500],
  },
  ...(['/v1/ungdomsapp', '/ungdomsapp/v1'] as const).flatMap((path, i): OperationSpec[] => [
    {
      method: 'post',
      path,
      operationId: i === 0 ? 'opprettUngdomsappSamtykke' : 'opprettUngdomsappSamtykkeV1',
      summary: 'Create the calling citizen’s youth-app consent (idempotent)',
      tag: 'youth app',
      access: 'citizen',
      success: { status: 200, description: 'Done.', schema: emptyObjectSchema },
      errors: STANDARD_ERRORS,
    },
    {
      method: 'delete',
      path,
      operationId: i === 0 ? 'slettUngdomsappSamtykke' : 'slettUngdomsappSamtykkeV1',
      summary: 'Withdraw the calling citizen’s youth-app consent (idempotent)',
      tag: 'youth app',
      access: 'citizen',
      success: { status: 200, description: 'Done.', schema: emptyObjectSchema },
      errors: STANDARD_ERRORS,
    },
  ]),
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
    path: '/metrics',
    operationId: 'metrics',
    summary:
      'Prometheus metrics, text format (no token needed: operational figures, no personal data); on PRIVACY_API_METRICS_PORT instead when that is set',
    tag: 'probes',
    access: 'public',
    success: { status: 200, description: 'Prometheus text exposition format 0.0.4.' },
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
    path: '/asyncapi.json',
    operationId: 'asyncApiDocument',
    summary:
      'The AsyncAPI 3 document of the events privacy-api publishes on NATS (setting-changed), to generate consumers from (no token needed: it holds no data)',
    tag: 'documentation',
    access: 'public',
    success: { status: 200, description: 'The document (also docs/asyncapi/privacy-api.json).' },
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
export const OPERATIONS: readonly OperationSpec[] = [
  ...settingsOperations,
  ...citizenOperations,
  ...coreOperations,
  ...publicOperations,
];

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
