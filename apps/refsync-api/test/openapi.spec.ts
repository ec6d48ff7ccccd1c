import request from 'supertest';
import { DATASET_ROUTES } from '@nhp/refsync-read';
import { startHarness, type Harness } from './support/harness';

let harness: Harness;
let doc: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let html: string;

beforeAll(async () => {
  harness = await startHarness();
  const app = harness.app();
  doc = (await request(app).get('/openapi.json').expect(200)).body;
  html = (await request(app).get('/docs').set('Host', 'refsync.example:3002').expect(200)).text;
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

function refsIn(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, into));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') into.push(v);
      else refsIn(v, into);
    }
  }
  return into;
}

describe('GET /openapi.json', () => {
  it('when fetched, then it is an OpenAPI 3.1 document with the X-API-KEY security scheme applied by default', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-KEY',
    });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
  });

  it.each(DATASET_ROUTES.map((r) => [r.path, r] as const))(
    'when %s is described, then its parameter, envelope and every status are there',
    (_path, route) => {
      const op = doc.paths[route.path].get;
      expect(op.parameters.map((p: { name: string }) => p.name)).toContain(route.sinceParam);
      expect(Object.keys(op.responses).sort()).toEqual([
        '200',
        '304',
        '400',
        '401',
        '404',
        '405',
        '406',
        '500',
        '503',
      ]);
      const envelope = route.spelling === 'primary' ? 'Envelope' : 'AltEnvelope';
      const prefix = route.dataset === 'treatmentGroup' ? 'TreatmentGroup' : 'ReimbursementGroup';
      expect(op.responses['200'].content['application/json'].schema).toEqual({
        $ref: `#/components/schemas/${prefix}${envelope}`,
      });
      expect(op.security).toBeUndefined(); // the document-wide key requirement applies
    },
  );

  it('when the contracts are converted, then both spellings and the problem details are components, strict where the contract is', () => {
    const schemas = doc.components.schemas;
    for (const name of [
      'TreatmentGroupEnvelope',
      'TreatmentGroupAltEnvelope',
      'ReimbursementGroupEnvelope',
      'ReimbursementGroupAltEnvelope',
      'ProblemDetails',
      'ReimbursementGroup',
      'TreatmentGroup',
      'SyncCompletedEventData',
    ]) {
      expect(schemas[name]).toBeDefined();
    }
    expect(schemas.ReimbursementGroup.additionalProperties).toBe(false);
    expect(schemas.TreatmentGroup.required).toEqual(['id', 'name']);
    expect(Object.keys(schemas.TreatmentGroupAltEntry.properties)).toEqual(['data', 'isDeleted']);
    expect(Object.keys(schemas.TreatmentGroupItem.properties)).toEqual([
      'data',
      'version',
      'lastChanged',
      'isDeleted',
    ]);
  });

  it('when any reference is followed, then it resolves inside the document', () => {
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce((node: any, key) => node?.[key], doc); // eslint-disable-line @typescript-eslint/no-explicit-any
      expect([ref, target]).toEqual([ref, expect.anything()]);
    }
  });

  it('when the probes and documentation are described, then they need no key', () => {
    for (const path of ['/health', '/livez', '/readyz', '/openapi.json', '/docs']) {
      expect(doc.paths[path].get.security).toEqual([]);
    }
  });
});

describe('GET /docs', () => {
  it('when rendered, then every operation, status and schema appears on one self-contained page', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    for (const route of DATASET_ROUTES) expect(html).toContain(`<code>${route.path}</code>`);
    for (const status of ['304', '400', '401', '404', '405', '406', '500', '503'])
      expect(html).toContain(`>${status}</td>`);
    expect(html).toContain('id="schema-ReimbursementGroup"');
    expect(html).toContain(
      "curl -i \\\n  -H 'X-API-KEY: &lt;your key&gt;' \\\n  'http://refsync.example:3002/api/v1/treatmentGroup'",
    );
    expect(html).not.toMatch(/<script|<link|src="http|@import/);
  });

  it('when the Host header carries markup, then it is escaped', async () => {
    const res = await request(harness.app())
      .get('/docs')
      .set('Host', '"><script>x</script>')
      .expect(200);
    expect(res.text).not.toContain('<script>x');
  });
});
