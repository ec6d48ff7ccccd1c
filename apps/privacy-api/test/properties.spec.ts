/**
 * Property-based tests: bodies and headers generated from the contracts so that they fail them
 * (an unknown property, a wrong type in a listed field, an invalid header value) and arbitrary
 * JSON. Whatever comes, the answer is never a 500, always an ErrorResponse, and an invalid request
 * writes nothing.
 */
import { randomUUID } from 'node:crypto';
import {
  createDefinitionRequestSchema,
  partRequestSchema,
  updateDefinitionRequestSchema,
} from '@nhp/privacy-contracts';
import { DEFINITIONS_COLLECTION, PARTS_COLLECTION } from '@nhp/privacy-data-access';
import fc from 'fast-check';
import request from 'supertest';
import type { z } from 'zod';
import { TEMPLATES, usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();
const NUM_RUNS = 60;

type Body = Record<string, unknown>;
type Method = 'post' | 'put' | 'patch';

/** A JSON value of any kind, including the awkward ones (deep nesting, odd numbers, long strings). */
const anyJson = fc.jsonValue({ maxDepth: 3 });

/**
 * Bodies that the contract rejects, built from a valid one: an unknown property added, or a
 * listed field given a value its schema refuses. Checked against the schema, so each is invalid.
 */
function invalidBodies(schema: z.ZodObject, valid: () => Body): fc.Arbitrary<Body> {
  const keys = Object.keys(schema.shape);
  const unknownKey = fc
    .string({ minLength: 1, maxLength: 12 })
    .filter((k) => !keys.includes(k) && k !== '__proto__');
  const withUnknown = fc
    .tuple(unknownKey, anyJson)
    .map(([key, value]) => ({ ...valid(), [key]: value }));
  const wrongType = fc
    .tuple(fc.constantFrom(...keys), anyJson)
    .filter(([key, value]) => !(schema.shape[key] as z.ZodType).safeParse(value).success)
    .map(([key, value]) => ({ ...valid(), [key]: value }));
  return fc.oneof(withUnknown, wrongType).filter((body) => !schema.safeParse(body).success);
}

async function counts(): Promise<[number, number]> {
  return [await h.get().count(PARTS_COLLECTION), await h.get().count(DEFINITIONS_COLLECTION)];
}

async function send(
  method: Method,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const { app, bearer, adminToken } = h.get();
  let req = request(app)
    [method](path)
    .set('Authorization', bearer(await adminToken()));
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
  return req.send(body as object);
}

function expectErrorResponse(res: request.Response, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({
    code,
    message: expect.any(String),
    errorCategory: expect.any(String),
  });
  expect(Object.keys(res.body as object).sort()).toEqual(['code', 'errorCategory', 'message']);
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at /);
}

describe('property: invalid bodies from the contracts', () => {
  let partKode: string;
  let definisjonGuid: string;
  beforeAll(async () => {
    const definition = await h.get().seedDefinition();
    partKode = definition.partKode;
    definisjonGuid = definition.definisjonGuid;
  });

  const cases: Array<[string, Method, string, z.ZodObject, () => Body]> = [
    [
      'POST /part/v1',
      'post',
      '/part/v1',
      partRequestSchema,
      () => ({ partKode: `f-${randomUUID().slice(0, 8)}` }),
    ],
    ['PUT /part/v1', 'put', '/part/v1', partRequestSchema, () => ({ partKode, navn: 'x' })],
    [
      'POST /innstillingdefinisjon/v1',
      'post',
      '/innstillingdefinisjon/v1',
      createDefinitionRequestSchema,
      () => ({ definisjonMalGuid: TEMPLATES.samtykke, definisjonGuid: randomUUID(), partKode }),
    ],
    [
      'PATCH /innstillingdefinisjon/v1',
      'patch',
      '/innstillingdefinisjon/v1',
      updateDefinitionRequestSchema,
      () => ({ definisjonGuid, status: 'inaktiv' }),
    ],
  ];

  it.each(cases)(
    'when %s gets a body its contract rejects, then 400 EPVK-100400 and nothing is written',
    async (_name, method, path, schema, valid) => {
      await fc.assert(
        fc.asyncProperty(invalidBodies(schema, valid), async (body) => {
          const before = await counts();
          const res = await send(method, path, body);
          expectErrorResponse(res, 400, 'EPVK-100400');
          expect(await counts()).toEqual(before);
        }),
        { numRuns: NUM_RUNS },
      );
      expect((await h.get().context.definitions.findDefinition(definisjonGuid))?.status).toBe(
        'aktiv',
      );
    },
    60_000,
  );

  it.each(cases)(
    'when %s gets arbitrary JSON, then never a 500 and a refusal writes nothing',
    async (_name, method, path) => {
      await fc.assert(
        fc.asyncProperty(anyJson, async (body) => {
          const before = await counts();
          const res = await send(method, path, JSON.stringify(body), {
            'Content-Type': 'application/json',
          });
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400) {
            expect(res.body).toEqual({
              code: expect.stringMatching(/^EPVK-/),
              message: expect.any(String),
              errorCategory: expect.any(String),
            });
            expect(await counts()).toEqual(before);
          }
        }),
        { numRuns: NUM_RUNS },
      );
    },
    60_000,
  );
});

describe('property: invalid headers', () => {
  const printable = fc.stringMatching(/^[\x21-\x7e ]{0,24}$/);

  it('when X-hn-isdebug is anything but true or false, then 400 EPVK-100400 and nothing is written', async () => {
    await fc.assert(
      fc.asyncProperty(
        printable.filter((v) => !/^\s*(true|false)\s*$/i.test(v)),
        async (value) => {
          const before = await counts();
          const res = await send(
            'post',
            '/part/v1',
            { partKode: `d-${randomUUID().slice(0, 8)}` },
            {
              'X-hn-isdebug': value,
            },
          );
          expectErrorResponse(res, 400, 'EPVK-100400');
          expect(await counts()).toEqual(before);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  }, 60_000);

  it('when Content-Type is not one of the four JSON types, then 415 EPVK-100415 and nothing is written', async () => {
    const mediaType = fc
      .tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[a-z0-9.-]{1,12}$/))
      .map(([type, sub]) => `${type}/${sub}`)
      .filter(
        (t) =>
          !/^(application\/json|application\/json-patch\+json|text\/json)$/.test(t) &&
          !t.endsWith('+json'),
      );
    await fc.assert(
      fc.asyncProperty(mediaType, async (type) => {
        const before = await counts();
        const res = await send(
          'post',
          '/part/v1',
          JSON.stringify({ partKode: `c-${randomUUID().slice(0, 8)}` }),
          {
            'Content-Type': type,
          },
        );
        expectErrorResponse(res, 415, 'EPVK-100415');
        expect(await counts()).toEqual(before);
      }),
      { numRuns: NUM_RUNS },
    );
  }, 60_000);

  it('when Authorization is arbitrary text, then 401 EPVK-100401 and nothing is written', async () => {
    await fc.assert(
      fc.asyncProperty(printable, async (value) => {
        const before = await counts();
        const res = await request(h.get().app)
          .post('/part/v1')
          .set('Authorization', value)
          .send({ partKode: `a-${randomUUID().slice(0, 8)}` });
        expectErrorResponse(res, 401, 'EPVK-100401');
        expect(await counts()).toEqual(before);
      }),
      { numRuns: NUM_RUNS },
    );
  }, 60_000);
});
