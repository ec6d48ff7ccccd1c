import { createPrivacyAuth } from '@nhp/privacy-auth';
import { INCLUSIONS_COLLECTION, inclusionKey } from '@nhp/privacy-data-access';
import { createHealth } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import { connectMongo } from '@nhp/shared-persistence';
import fc from 'fast-check';
import request from 'supertest';
import { createApp } from '../src/app';
import { createPrivacyContext } from '../src/context';
import { TEST_CLIENT, usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness({ options: { basePath: '/personvern' } });

const FNR = '13116900216';
const PATHS = ['/v1/settinnbyggersinkludering', '/settinnbyggersinkludering/v1'] as const;

/** A definition of a new party whose write grant TEST_CLIENT holds, and a body naming it. */
async function arranged(fnr = FNR) {
  const def = await h.get().seedDefinition();
  await h.get().grant(TEST_CLIENT, def.partKode, { write: true });
  const body = {
    innbyggerFnr: fnr,
    partKode: def.partKode,
    personvernInnstillingDefinisjonId: def.definisjonGuid,
    inkluderingType: 'inkludert',
    aktiv: true,
  };
  return { def, body, auth: h.get().bearer(await h.get().token({ scopes: ['write'] })) };
}

const stored = (fnr: string, guid: string) =>
  h
    .get()
    .connection.collection(INCLUSIONS_COLLECTION)
    .findOne({ _id: inclusionKey(fnr, guid) as never });

describe('POST settinnbyggersinkludering', () => {
  it.each(PATHS)(
    'when a client with the write grant includes a citizen on %s, then 200 with the canonical body and the inclusion is stored and audited',
    async (path) => {
      const { def, body, auth } = await arranged();
      const res = await request(h.get().app)
        .post(path)
        .set('Authorization', auth)
        .send(body)
        .expect(200);
      expect(res.body).toEqual({ ...body, inkluderingType: 'Inkludert' });

      await h.get().journalIdle();
      expect(await stored(FNR, def.definisjonGuid)).toMatchObject({
        inkluderingType: 'Inkludert',
        aktiv: true,
        partKode: def.partKode,
        journal: [],
      });
      const audit = await h.get().context.journal.listAudit({ definisjonGuid: def.definisjonGuid });
      expect(audit.filter((a) => a.operation.startsWith('inclusion.'))).toEqual([
        expect.objectContaining({
          operation: 'inclusion.set',
          actor: { kind: 'client', id: TEST_CLIENT },
          target: expect.objectContaining({ fnr: FNR, partKode: def.partKode }),
          requestId: res.headers['x-request-id'],
        }),
      ]);
    },
  );

  it('when clients send other letter cases, paths in PascalCase and the gateway prefix, then each spelling is answered as the interface spells it', async () => {
    const { def, body, auth } = await arranged();
    const cases: Array<[string, string, string]> = [
      ['/V1/SettInnbyggersInkludering', 'OPPFORT', 'Oppfort'],
      ['/personvern/SettInnbyggersInkludering/v1', 'deltager', 'Deltager'],
      ['/personvern/v1/settinnbyggersinkludering', 'InKlUdErT', 'Inkludert'],
    ];
    for (const [path, sent, answered] of cases) {
      const res = await request(h.get().app)
        .post(path)
        .set('Authorization', auth)
        .send({ ...body, inkluderingType: sent })
        .expect(200);
      expect(res.body.inkluderingType).toBe(answered);
      expect((await stored(FNR, def.definisjonGuid))?.['inkluderingType']).toBe(answered);
    }
  });

  it('when aktiv is false, then the inclusion ends and its history keeps every change', async () => {
    const { def, body, auth } = await arranged();
    await request(h.get().app).post(PATHS[0]).set('Authorization', auth).send(body).expect(200);
    const res = await request(h.get().app)
      .post(PATHS[1])
      .set('Authorization', auth)
      .send({ ...body, aktiv: false })
      .expect(200);
    expect(res.body.aktiv).toBe(false);
    const doc = await stored(FNR, def.definisjonGuid);
    expect(doc).toMatchObject({ aktiv: false });
    expect((doc?.['history'] as Array<{ aktiv: boolean }>).map((item) => item.aktiv)).toEqual([
      true,
      false,
    ]);
  });

  it('when aktiv is omitted (clients leave out nulls), then the inclusion is active', async () => {
    const { def, body, auth } = await arranged();
    const { aktiv: _aktiv, ...withoutAktiv } = body;
    const res = await request(h.get().app)
      .post(PATHS[0])
      .set('Authorization', auth)
      .send(withoutAktiv)
      .expect(200);
    expect(res.body.aktiv).toBe(true);
    expect((await stored(FNR, def.definisjonGuid))?.['aktiv']).toBe(true);
  });

  it('when the same inclusion is sent again, then 200 and nothing new is recorded', async () => {
    const { def, body, auth } = await arranged();
    await request(h.get().app).post(PATHS[0]).set('Authorization', auth).send(body).expect(200);
    await request(h.get().app).post(PATHS[1]).set('Authorization', auth).send(body).expect(200);
    expect((await stored(FNR, def.definisjonGuid))?.['history']).toHaveLength(1);
  });

  it('when the identity number is invalid, then 400 EPVK-101518 and nothing is written', async () => {
    const { def, body, auth } = await arranged();
    const res = await request(h.get().app)
      .post(PATHS[0])
      .set('Authorization', auth)
      .send({ ...body, innbyggerFnr: '13116950216' })
      .expect(400);
    expect(res.body).toEqual({
      code: 'EPVK-101518',
      message: expect.any(String),
      errorCategory: 'ClientValidationError',
    });
    expect(await h.get().count(INCLUSIONS_COLLECTION, { definisjonGuid: def.definisjonGuid })).toBe(
      0,
    );
  });

  it('when the definition is unknown, foreign to partKode, only readable or not granted, then 400 EPVK-101500 alike and nothing is written', async () => {
    const { def, body, auth } = await arranged();
    const other = await h.get().seedDefinition();
    const readOnly = await h.get().seedDefinition();
    await h.get().grant(TEST_CLIENT, readOnly.partKode, { read: true });
    const notGranted = await h.get().seedDefinition();
    const bodies = [
      { ...body, personvernInnstillingDefinisjonId: '0f0e0d0c-0b0a-4909-8807-060504030201' },
      { ...body, partKode: other.partKode },
      {
        ...body,
        partKode: readOnly.partKode,
        personvernInnstillingDefinisjonId: readOnly.definisjonGuid,
      },
      {
        ...body,
        partKode: notGranted.partKode,
        personvernInnstillingDefinisjonId: notGranted.definisjonGuid,
      },
    ];
    const messages = new Set<string>();
    for (const sent of bodies) {
      const res = await request(h.get().app)
        .post(PATHS[1])
        .set('Authorization', auth)
        .send(sent)
        .expect(400);
      expect(res.body).toMatchObject({
        code: 'EPVK-101500',
        errorCategory: 'ClientValidationError',
      });
      messages.add(res.body.message);
    }
    expect(messages.size).toBe(1);
    expect(
      await h.get().count(INCLUSIONS_COLLECTION, {
        innbyggerFnr: FNR,
        partKode: { $in: [def.partKode, readOnly.partKode, notGranted.partKode] },
      }),
    ).toBe(0);
  });

  it('when the definition is inactive, then an inclusion cannot start: 400 EPVK-101501', async () => {
    const def = await h.get().seedDefinition({ status: 'inaktiv' });
    await h.get().grant(TEST_CLIENT, def.partKode, { write: true });
    const res = await request(h.get().app)
      .post(PATHS[0])
      .set('Authorization', h.get().bearer(await h.get().token()))
      .send({
        innbyggerFnr: FNR,
        partKode: def.partKode,
        personvernInnstillingDefinisjonId: def.definisjonGuid,
        inkluderingType: 'Inkludert',
      })
      .expect(400);
    expect(res.body).toMatchObject({ code: 'EPVK-101501', errorCategory: 'ServerValidationError' });
  });

  it('when the body breaks the schema, then 400 EPVK-100400 naming the field', async () => {
    const { body, auth } = await arranged();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...body, inkluderingType: 'utmeldt' }, 'inkluderingType'],
      [{ ...body, extra: 1 }, 'extra'],
      [{ ...body, aktiv: 'yes' }, 'aktiv'],
      [
        { ...body, personvernInnstillingDefinisjonId: 'not-a-guid' },
        'personvernInnstillingDefinisjonId',
      ],
      [{ ...body, innbyggerFnr: null }, 'innbyggerFnr'],
    ];
    for (const [sent, field] of cases) {
      const res = await request(h.get().app)
        .post(PATHS[0])
        .set('Authorization', auth)
        .send(sent)
        .expect(400);
      expect(res.body).toMatchObject({
        code: 'EPVK-100400',
        errorCategory: 'ClientValidationError',
      });
      expect(res.body.message).toContain(field);
    }
  });

  it('when the body is not JSON, then 400 EPVK-100400', async () => {
    const { auth } = await arranged();
    const res = await request(h.get().app)
      .post(PATHS[1])
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .send('{"innbyggerFnr":')
      .expect(400);
    expect(res.body.code).toBe('EPVK-100400');
  });

  it.each(PATHS)('when there is no token on %s, then 401 EPVK-100401', async (path) => {
    const { body } = await arranged();
    const res = await request(h.get().app).post(path).send(body).expect(401);
    expect(res.body).toMatchObject({ code: 'EPVK-100401', errorCategory: 'ClientValidationError' });
  });

  it.each(PATHS)(
    'when the token lacks the write scope on %s, then 401 EPVK-100403 (the interface lists no 403) and nothing is written',
    async (path) => {
      const { def, body } = await arranged();
      for (const token of [
        await h.get().token({ scopes: ['read'] }),
        await h.get().citizenToken(FNR),
      ]) {
        const res = await request(h.get().app)
          .post(path)
          .set('Authorization', h.get().bearer(token))
          .send(body)
          .expect(401);
        expect(res.body).toMatchObject({ code: 'EPVK-100403' });
      }
      expect(
        await h.get().count(INCLUSIONS_COLLECTION, { definisjonGuid: def.definisjonGuid }),
      ).toBe(0);
    },
  );

  it('when the database cannot be reached, then 500 EPVK-100503 and no internals', async () => {
    const { body, auth } = await arranged();
    const logger = createLogger({ name: 'test', level: 'silent' });
    const connection = await connectMongo({ uri: h.get().infra.mongoUri, logger });
    await connection.close();
    const context = createPrivacyContext({ logger, connection, cacheTtlMs: 0 });
    const app = createApp({
      context,
      health: createHealth({ checks: {} }),
      authenticate: createPrivacyAuth({ ...h.get().issuer.authOptions(), logger }).authenticate,
    });
    const res = await request(app).post(PATHS[0]).set('Authorization', auth).send(body).expect(500);
    expect(res.body).toEqual({
      code: 'EPVK-100503',
      message: expect.any(String),
      errorCategory: 'EndpointIsDown',
    });
    expect(res.text).not.toContain('127.0.0.1');
  });

  it('when bodies are random or almost right, then always 400 ErrorResponse, never 500, and nothing is written', async () => {
    const { def, body, auth } = await arranged('01010012356');
    const anyJson = fc.jsonValue({ maxDepth: 3 });
    const keys = Object.keys(body);
    const almost = fc.oneof(
      fc
        .record({ key: fc.constantFrom(...keys), value: anyJson })
        .filter(
          ({ key, value }) => !(key === 'aktiv' && (typeof value === 'boolean' || value === null)),
        )
        .filter(
          ({ key, value }) =>
            !(
              key === 'inkluderingType' &&
              typeof value === 'string' &&
              /^(inkludert|deltager|oppfort)$/i.test(value)
            ),
        )
        .map(({ key, value }) => ({ ...body, [key]: value })),
      fc
        .record({ key: fc.string({ minLength: 1 }), value: anyJson })
        .filter(({ key }) => !keys.includes(key) && !['__proto__', 'constructor'].includes(key))
        .map(({ key, value }) => ({ ...body, [key]: value })),
      anyJson,
    );
    await fc.assert(
      fc.asyncProperty(almost, fc.constantFrom(...PATHS), async (sent, path) => {
        const res = await request(h.get().app)
          .post(path)
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(sent));
        expect(res.status).toBe(400);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'errorCategory', 'message']);
      }),
      { numRuns: 60 },
    );
    expect(await h.get().count(INCLUSIONS_COLLECTION, { definisjonGuid: def.definisjonGuid })).toBe(
      0,
    );
  });
});
