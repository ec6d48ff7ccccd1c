import { z } from 'zod';
import {
  buildOpenApiDocument,
  createDefinitionRequestSchema,
  emptyObjectSchema,
  errorResponseSchema,
  partRequestSchema,
  updateDefinitionRequestSchema,
} from '../src';

describe('party and definition contracts', () => {
  it('when a client omits every null field, then the party body is valid', () => {
    expect(partRequestSchema.safeParse({ partKode: 'sykehus' }).success).toBe(true);
    expect(partRequestSchema.safeParse({}).success).toBe(true);
  });

  it('when a body has a property the interface does not list, then the issue names it', () => {
    const result = partRequestSchema.safeParse({ partKode: 'a', farge: 'blå' });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain('farge');
  });

  it('when partKode holds a character a NATS subject token cannot, then it is refused', () => {
    for (const partKode of ['a.b', 'a b', 'a*', 'a>', '', 'x'.repeat(65)]) {
      expect(partRequestSchema.safeParse({ partKode }).success).toBe(false);
    }
    expect(partRequestSchema.safeParse({ partKode: 'Helse-Vest_1' }).success).toBe(true);
  });

  it('when a definition is created, then GUIDs of any version and case pass and int32 is enforced', () => {
    const base = {
      definisjonMalGuid: '7C1E0D3A-5B2F-4E8A-9C61-0A1B2C3D4E01',
      definisjonGuid: '00000000-0000-0000-0000-000000000001',
      partKode: 'p',
    };
    expect(createDefinitionRequestSchema.safeParse(base).success).toBe(true);
    expect(createDefinitionRequestSchema.safeParse({ ...base, sortering: 2 ** 31 }).success).toBe(
      false,
    );
    expect(createDefinitionRequestSchema.safeParse({ ...base, sortering: null }).success).toBe(
      true,
    );
    expect(
      createDefinitionRequestSchema.safeParse({ ...base, kravTilLesingAvFullstendigTekst: null })
        .success,
    ).toBe(false);
  });

  it('when a definition is updated, then status is aktiv or inaktiv in any case, or null', () => {
    const parse = (status: unknown) =>
      updateDefinitionRequestSchema.safeParse({
        definisjonGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        status,
      }).success;
    expect([parse('aktiv'), parse('INAKTIV'), parse(null)]).toEqual([true, true, true]);
    expect([parse('slettet'), parse(''), parse(1)]).toEqual([false, false, false]);
  });

  it('when an ErrorResponse is read, then it has exactly code, message and errorCategory', () => {
    expect(
      errorResponseSchema.safeParse({ code: null, message: null, errorCategory: 'Unknown' })
        .success,
    ).toBe(true);
    expect(errorResponseSchema.safeParse({ code: 'x', message: 'y' }).success).toBe(false);
  });
});

describe('buildOpenApiDocument', () => {
  const doc = buildOpenApiDocument(
    [
      {
        method: 'post',
        path: '/part/v1',
        operationId: 'createPart',
        summary: 'Create',
        tag: 'parties',
        access: 'system',
        scope: 'admin',
        body: partRequestSchema,
        success: { status: 201, description: 'Created.', schema: emptyObjectSchema },
        errors: [400, 401, 403, 500],
      },
      {
        method: 'get',
        path: '/things',
        operationId: 'listThings',
        summary: 'List',
        tag: 't',
        access: 'system',
        query: [{ name: 'n', schema: z.int32() }],
        success: { status: 200, description: 'ok', schema: z.strictObject({ a: z.string() }) },
        errors: [400],
      },
      {
        method: 'get',
        path: '/health',
        operationId: 'health',
        summary: 'Health',
        tag: 'probes',
        access: 'public',
        success: { status: 200, description: 'ok' },
        errors: [],
      },
    ],
    { title: 't', version: '1', description: 'd' },
  );
  const schemas = doc.components['schemas'] as Record<string, Record<string, unknown>>;
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;

  it('when built, then named schemas become components referenced from the operations', () => {
    expect(schemas['PartRequest']).toMatchObject({ type: 'object', additionalProperties: false });
    expect(schemas['ErrorResponse']).toMatchObject({ type: 'object' });
    const body = paths['/part/v1']?.['post']?.['requestBody'] as {
      content: Record<string, { schema: unknown }>;
    };
    expect(Object.keys(body.content)).toEqual([
      'application/json',
      'application/json-patch+json',
      'text/json',
      'application/*+json',
    ]);
    expect(body.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/PartRequest',
    });
  });

  it('when a schema has no id, then it gets one after its operation', () => {
    expect(schemas['listThingsResponse']).toMatchObject({ type: 'object' });
  });

  it('when built, then references point only at components that exist', () => {
    const refs = [
      ...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g),
    ].map((m) => m[1] as string);
    for (const name of refs) expect(schemas[name]).toBeDefined();
  });

  it('when an operation is public, then it needs no security; others need Bearer or DPoP', () => {
    expect(paths['/health']?.['get']?.['security']).toEqual([]);
    expect(doc['security']).toEqual([{ Bearer: [] }, { DPoP: [] }]);
    expect(paths['/part/v1']?.['post']?.['description']).toContain('personverninnstilling_admin');
  });

  it('when an operation lists error statuses, then each answers ErrorResponse, plus 413 and 415 with a body and 429 with a token', () => {
    const responses = paths['/part/v1']?.['post']?.['responses'] as Record<string, unknown>;
    expect(Object.keys(responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '413',
      '415',
      '429',
      '500',
    ]);
    expect(responses['403']).toEqual({ $ref: '#/components/responses/Error403' });
    expect(paths['/health']?.['get']?.['responses']).not.toHaveProperty('429');
  });
});
