import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { asyncApiProblems } from '@nhp/shared-testing';
import request from 'supertest';
import { usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness({ options: { basePath: '/personvern' } });

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme: string }>;
    schemas: Record<string, { type?: string; additionalProperties?: unknown }>;
  };
}

/** Every (method, path) the interface lists, plus the description itself. */
const INTERFACE_OPERATIONS = [
  'post /v1/settinnbyggersinkludering',
  'post /settinnbyggersinkludering/v1',
  'post /innstillingdefinisjon/v1',
  'patch /innstillingdefinisjon/v1',
  'post /personverninnstillinger/hentinnbyggerspiforpart/v2',
  'post /personverninnstillinger/sjekkinnbyggerspistatus/v2',
  'get /personverninnstillinger/hentinnbyggereaktivepifordefinisjon/v2',
  'post /personverninnstillinger/hentinnbyggersopplastedebevis/v2',
  'post /personverninnstillinger/settinnbyggerspersonverninnstilling/v2',
  'post /part/v1',
  'put /part/v1',
  'get /representasjonsforhold/v1',
  'post /v1/ungdomsapp',
  'delete /v1/ungdomsapp',
  'post /ungdomsapp/v1',
  'delete /ungdomsapp/v1',
  'get /health',
];

interface Layer {
  rawPath?: unknown;
  route?: { path?: unknown; methods?: Record<string, boolean> };
  handle?: { stack?: unknown };
}

/** "method path" of every route the router serves (mounted routers included). */
function servedRoutes(stack: unknown, prefix = ''): string[] {
  if (!Array.isArray(stack)) throw new Error('a router without a stack');
  return (stack as Layer[]).flatMap((layer) => {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      return paths.flatMap((path) =>
        Object.keys(layer.route?.methods ?? {}).map((m) => `${m} ${prefix}${String(path)}`),
      );
    }
    if (Array.isArray(layer.handle?.stack) && typeof layer.rawPath === 'string') {
      return servedRoutes(
        layer.handle.stack,
        prefix + (layer.rawPath === '/' ? '' : layer.rawPath),
      );
    }
    return [];
  });
}

describe('GET /openapi.json and GET /docs', () => {
  let doc: Doc;
  beforeAll(async () => {
    const res = await request(h.get().app).get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body as Doc;
  });

  it('when asked without a token, then the OpenAPI 3.1 document is served', () => {
    expect(doc.openapi).toBe('3.1.0');
  });

  it('when read, then it lists every operation of the interface', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    expect(listed).toEqual(expect.arrayContaining(INTERFACE_OPERATIONS));
  });

  it('when the app serves a route, then the document describes it (no undocumented route)', () => {
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method} ${path.toLowerCase()}`),
      ),
    );
    const served = servedRoutes(
      (h.get().app as unknown as { router: { stack: unknown } }).router.stack,
    )
      .map((route) => route.toLowerCase().replace(' /personvern/', ' /'))
      .filter((route) => !route.startsWith('_all'));
    expect(served.length).toBeGreaterThan(15);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
  });

  it('when read, then it declares Bearer JWT and DPoP, and only the public routes need neither', () => {
    expect(doc.components.securitySchemes['Bearer']).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(doc.components.securitySchemes['DPoP']).toMatchObject({ type: 'http', scheme: 'dpop' });
    const open = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => Array.isArray(op.security) && op.security.length === 0)
        .map(([method]) => `${method} ${path}`),
    );
    expect(open.sort()).toEqual([
      'get /asyncapi.json',
      'get /docs',
      'get /health',
      'get /metrics',
      'get /openapi.json',
    ]);
  });

  it('when read, then the request bodies of parties and definitions reject unlisted properties', () => {
    for (const name of [
      'PartRequest',
      'CreateDefinitionRequest',
      'UpdateDefinitionRequest',
      'Relasjon',
      'ErrorResponse',
    ]) {
      expect(doc.components.schemas[name]).toMatchObject({
        type: 'object',
        additionalProperties: false,
      });
    }
  });

  it('when /asyncapi.json is asked without a token, at the root and under the base path, then the AsyncAPI 3 document of its events is served, the one written to docs/asyncapi', async () => {
    const written = JSON.parse(
      readFileSync(resolve(__dirname, '../../../docs/asyncapi/privacy-api.json'), 'utf8'),
    ) as unknown;
    for (const path of ['/asyncapi.json', '/personvern/asyncapi.json']) {
      const res = await request(h.get().app).get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(written);
    }
    expect(await asyncApiProblems(written)).toEqual([]);
  });

  it('when /docs is asked, then a self-contained HTML page names the operations', async () => {
    const res = await request(h.get().app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('/innstillingdefinisjon/v1');
    expect(res.text).not.toMatch(/<script|https?:\/\/cdn/i);
  });

  it('when asked under the base path, then the same document is served', async () => {
    const res = await request(h.get().app).get('/personvern/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(doc);
  });
});
