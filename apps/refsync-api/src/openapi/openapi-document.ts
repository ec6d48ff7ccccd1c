import {
  altEnvelopeSchemas,
  envelopeSchemas,
  problemDetailsSchema,
  syncCompletedEventDataSchema,
  type Dataset,
} from '@nhp/refsync-contracts';
import { DATASET_ROUTES, type DatasetRoute } from '@nhp/refsync-read';
import { COMPONENT_SCHEMA_REF, componentSchemas } from '@nhp/shared-openapi';

/** The OpenAPI 3.1 document: JSON objects all the way down. */
export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, unknown>;
    [key: string]: unknown;
  };
};

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: unknown[];
  parameters?: Array<Record<string, unknown>>;
  responses: Record<string, unknown>;
}

/**
 * Every contract schema as a JSON Schema 2020-12 component (OpenAPI 3.1 uses that dialect). One
 * conversion of all of them, so shared parts (CodedConcept, ...) become one named component each,
 * referenced from wherever they occur.
 */
function contractSchemas(): Record<string, unknown> {
  return componentSchemas(
    {
      treatmentGroup: envelopeSchemas.treatmentGroup,
      reimbursementGroup: envelopeSchemas.reimbursementGroup,
      treatmentGroupAlt: altEnvelopeSchemas.treatmentGroup,
      reimbursementGroupAlt: altEnvelopeSchemas.reimbursementGroup,
      problem: problemDetailsSchema,
      event: syncCompletedEventDataSchema,
    },
    'output',
  ).defs;
}

const ref = (name: string) => ({ $ref: `${COMPONENT_SCHEMA_REF}${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

const ENVELOPE_COMPONENT: Record<DatasetRoute['spelling'], Record<Dataset, string>> = {
  primary: {
    treatmentGroup: 'TreatmentGroupEnvelope',
    reimbursementGroup: 'ReimbursementGroupEnvelope',
  },
  alternative: {
    treatmentGroup: 'TreatmentGroupAltEnvelope',
    reimbursementGroup: 'ReimbursementGroupAltEnvelope',
  },
};

const OPERATION_ID: Record<DatasetRoute['spelling'], Record<Dataset, string>> = {
  primary: { treatmentGroup: 'listTreatmentGroups', reimbursementGroup: 'listReimbursementGroups' },
  alternative: {
    treatmentGroup: 'listTreatmentGroupsAlt',
    reimbursementGroup: 'listReimbursementGroupsAlt',
  },
};

const DATASET_TITLE: Record<Dataset, string> = {
  treatmentGroup: 'treatment groups',
  reimbursementGroup: 'reimbursement groups',
};

const RULES = [
  'Without the version parameter: all non-deleted items, each with isDeleted false (R1).',
  'With N: the items whose version is greater than N, deleted items (isDeleted true) included (R2).',
  'With 0 (or any negative long): all items, deleted ones included (R3).',
  'With a value at or above the current version: items empty, currentVersion the current version (R4 and R6).',
  'All changes accumulated since N are returned, however many synchronisations happened (R5).',
  'Items are ordered by version, then id; identical requests give identical bytes.',
  'Client handling: insert or replace items with isDeleted false by id, remove items with isDeleted true, store currentVersion and send it as the version parameter next time.',
];

function datasetOperation(route: DatasetRoute): OpenApiOperation {
  const spellingNote =
    route.spelling === 'primary'
      ? 'Primary spelling: parameter `sinceVersion`, envelope `{currentVersion, items: [{data, version, lastChanged, isDeleted}]}`.'
      : 'Alternative spelling: parameter `since-version`, envelope `{currentVersion, entries: [{data, isDeleted}]}`. The primary parameter name `sinceVersion` is not recognised here (ignored like any unknown parameter).';
  return {
    operationId: OPERATION_ID[route.spelling][route.dataset],
    summary: `List ${DATASET_TITLE[route.dataset]} (${route.spelling} spelling)`,
    description: [spellingNote, '', ...RULES.map((r) => `- ${r}`)].join('\n'),
    tags: [route.spelling === 'primary' ? 'datasets' : 'datasets (alternative spelling)'],
    parameters: [
      {
        name: route.sinceParam,
        in: 'query',
        required: false,
        description:
          'The currentVersion the client stored. A base-10 signed 64-bit integer (optional leading "-", digits only), given at most once; anything else is 400. Unknown query parameters are ignored.',
        schema: { type: 'integer', format: 'int64' },
        example: 41,
      },
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'The ETag of the representation the client holds; a match answers 304.',
        schema: { type: 'string' },
      },
      {
        name: 'Accept-Encoding',
        in: 'header',
        required: false,
        description: 'br and gzip are offered; q-values are honoured.',
        schema: { type: 'string' },
        example: 'br, gzip',
      },
    ],
    responses: {
      '200': {
        description: 'The envelope at the current data version.',
        headers: {
          ETag: { $ref: '#/components/headers/ETag' },
          'Cache-Control': { $ref: '#/components/headers/CacheControl' },
          Vary: { $ref: '#/components/headers/Vary' },
          'Content-Encoding': { $ref: '#/components/headers/ContentEncoding' },
          'X-Request-Id': { $ref: '#/components/headers/XRequestId' },
        },
        content: {
          'application/json': { schema: ref(ENVELOPE_COMPONENT[route.spelling][route.dataset]) },
        },
      },
      '304': {
        description:
          'Not modified: If-None-Match matched the current representation. No body; answered without touching the database.',
        headers: {
          ETag: { $ref: '#/components/headers/ETag' },
          'Cache-Control': { $ref: '#/components/headers/CacheControl' },
          Vary: { $ref: '#/components/headers/Vary' },
        },
      },
      '400': responseRef('BadRequest'),
      '401': responseRef('Unauthorized'),
      '404': responseRef('NotFound'),
      '405': responseRef('MethodNotAllowed'),
      '406': responseRef('NotAcceptable'),
      '500': responseRef('InternalError'),
      '503': responseRef('Unavailable'),
    },
  };
}

function problem(description: string, extraHeaders: Record<string, unknown> = {}) {
  return {
    description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' }, ...extraHeaders },
    content: { 'application/problem+json': { schema: ref('ProblemDetails') } },
  };
}

function publicOperation(
  operationId: string,
  summary: string,
  tag: string,
  responses: Record<string, unknown>,
): Record<string, OpenApiOperation> {
  return { get: { operationId, summary, tags: [tag], security: [], responses } };
}

let cached: OpenApiDocument | undefined;

/** Built once per process from the contracts; the same object is served on every request. */
export function openApiDocument(): OpenApiDocument {
  if (cached) return cached;
  const paths: OpenApiDocument['paths'] = {};
  for (const route of DATASET_ROUTES) paths[route.path] = { get: datasetOperation(route) };

  const probe = (status: string) => ({ description: status });
  paths['/openapi.json'] = publicOperation(
    'openApiDocument',
    'This OpenAPI 3.1 document (no key needed: it holds no data)',
    'documentation',
    {
      '200': {
        description: 'The document.',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
  );
  paths['/docs'] = publicOperation(
    'apiReference',
    'A readable API reference generated from this document (no key needed)',
    'documentation',
    {
      '200': {
        description: 'HTML page, self-contained.',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
    },
  );
  paths['/health'] = publicOperation(
    'health',
    'Health: 200 when MongoDB answers (a NATS outage only degrades the service), 503 otherwise',
    'probes',
    {
      '200': probe('Healthy (possibly degraded).'),
      '503': probe('MongoDB is unavailable, or the service is shutting down.'),
    },
  );
  paths['/livez'] = publicOperation('liveness', 'Liveness: the process is up', 'probes', {
    '200': probe('Alive.'),
  });
  paths['/readyz'] = publicOperation(
    'readiness',
    'Readiness: MongoDB ping; NATS is reported but not required',
    'probes',
    {
      '200': probe(
        'Ready: status "ok", or "degraded" with `degraded: ["nats"]` while NATS is down (cache invalidation then waits for the periodic version check).',
      ),
      '503': probe('Not ready (MongoDB is down, or the service is shutting down).'),
    },
  );

  cached = {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'refsync-api: reference-data synchronisation',
      version: '1.0.0',
      description: [
        'Treatment groups and reimbursement groups as versioned lists with incremental change retrieval.',
        'Every data endpoint answers one envelope with the data version `currentVersion`; a client keeps a local copy current by sending the version it stored and applying the changes it gets back.',
        'The data changes at most once per day (a nightly synchronisation), so poll rarely and revalidate with ETags.',
        'Two spellings of the same behaviour are served: primary (`/api/v1/treatmentGroup?sinceVersion=N`) and alternative (`/api/v1/treatment-group?since-version=N`).',
        'Every data endpoint needs the `X-API-KEY` header; a missing or invalid key gets 401 with the same body in every case.',
        'Errors are RFC 9457 problem details (`application/problem+json`).',
        'After each synchronisation a CloudEvent `no.nhp.refsync.sync-completed.v1` is published on the NATS subject `refsync.events.sync-completed` (schema: SyncCompletedEventData).',
      ].join('\n\n'),
    },
    servers: [{ url: '/', description: 'This server' }],
    security: [{ ApiKey: [] }],
    tags: [
      { name: 'datasets', description: 'Primary spelling.' },
      { name: 'datasets (alternative spelling)', description: 'Alternative spelling.' },
      { name: 'documentation', description: 'This document and its HTML rendering.' },
      { name: 'probes', description: 'Health probes for orchestrators; no key needed.' },
    ],
    paths,
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-KEY',
          description:
            'The key issued to your client. Several keys may be valid at once (rotation).',
        },
      },
      headers: {
        ETag: {
          description:
            'Strong entity tag of this representation: derived from dataset, spelling, effective version parameter, current version and content coding.',
          schema: { type: 'string' },
        },
        CacheControl: {
          description: '`no-cache`: a client may store the response but must revalidate it.',
          schema: { type: 'string', const: 'no-cache' },
        },
        Vary: { description: '`Accept-Encoding`.', schema: { type: 'string' } },
        ContentEncoding: {
          description: '`br` or `gzip` when negotiated; absent for identity.',
          schema: { type: 'string', enum: ['br', 'gzip'] },
        },
        XRequestId: {
          description:
            'The request id (yours when you sent a plain X-Request-Id, otherwise generated).',
          schema: { type: 'string' },
        },
      },
      responses: {
        BadRequest: problem(
          'The version parameter is not a base-10 signed 64-bit integer, or it was given more than once.',
        ),
        Unauthorized: problem('The X-API-KEY header is missing or the key is not valid.'),
        NotFound: problem('No resource at this path (any path not listed in this document).'),
        MethodNotAllowed: problem('Only GET and HEAD are served on this path.', {
          Allow: { description: 'The methods the path serves.', schema: { type: 'string' } },
        }),
        NotAcceptable: problem(
          'The Accept header excludes application/json, or Accept-Encoding excludes every offered coding (br, gzip, identity).',
        ),
        InternalError: problem('Unexpected server error; no internal detail is given.'),
        Unavailable: problem('The database cannot be reached; retry later.'),
      },
      schemas: contractSchemas(),
    },
  };
  return cached;
}
