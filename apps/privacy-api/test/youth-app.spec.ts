import { createPrivacyAuth } from '@nhp/privacy-auth';
import { SETTINGS_COLLECTION } from '@nhp/privacy-data-access';
import { YOUTH_APP_DEFINITION_GUID } from '@nhp/privacy-domain';
import { createHealth } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import { connectMongo } from '@nhp/shared-persistence';
import fc from 'fast-check';
import request from 'supertest';
import { createApp } from '../src/app';
import { createPrivacyContext } from '../src/context';
import { fnrBornOn } from '@nhp/privacy-testing';
import { usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness({ options: { basePath: '/personvern' } });

const PATHS = ['/v1/ungdomsapp', '/ungdomsapp/v1'] as const;
const STATUS = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
let citizens = 0;
/** A fresh citizen (aged 15) for each test. */
const newCitizen = () =>
  fnrBornOn(new Date(Date.UTC(2011, 0, (citizens += 1))), { synthetic: true });

const youthSettings = (pid: string) =>
  h
    .get()
    .count(SETTINGS_COLLECTION, { innbyggerFnr: pid, definisjonGuid: YOUTH_APP_DEFINITION_GUID });

async function as(pid: string) {
  return h.get().bearer(await h.get().citizenToken(pid));
}

/** Check status of the built-in definition, as a system with the admin scope sees it. */
async function status(pid: string) {
  const res = await request(h.get().app)
    .post(STATUS)
    .set('Authorization', h.get().bearer(await h.get().adminToken()))
    .send({ innbyggerFnr: pid, definisjonGuid: YOUTH_APP_DEFINITION_GUID, partKode: 'helsenorge' })
    .expect(200);
  return res.body as { aktiv: boolean; sekvensnummer?: number | null; typePi: string };
}

describe('youth-app consent', () => {
  it.each(PATHS)(
    'when a citizen gives the consent on %s, then 200 {} and check status of the built-in definition shows it active',
    async (path) => {
      const pid = newCitizen();
      const res = await request(h.get().app)
        .post(path)
        .set('Authorization', await as(pid))
        .expect(200);
      expect(res.body).toEqual({});
      expect(await status(pid)).toMatchObject({
        aktiv: true,
        sekvensnummer: 1,
        typePi: 'samtykke',
      });

      await h.get().journalIdle();
      const audit = await h.get().context.journal.listAudit({ fnr: pid });
      expect(audit).toEqual([
        expect.objectContaining({
          operation: 'setting.set',
          actor: { kind: 'citizen', id: 'citizen' },
          requestId: res.headers['x-request-id'],
        }),
      ]);
    },
  );

  it.each(PATHS)(
    'when a citizen withdraws the consent on %s, then 200 {} and check status shows it inactive',
    async (path) => {
      const pid = newCitizen();
      const auth = await as(pid);
      await request(h.get().app).post(PATHS[0]).set('Authorization', auth).expect(200);
      const res = await request(h.get().app).delete(path).set('Authorization', auth).expect(200);
      expect(res.body).toEqual({});
      expect(await status(pid)).toMatchObject({ aktiv: false, sekvensnummer: 2 });
    },
  );

  it('when POST and DELETE are repeated, then each answers 200 and only changes get a sekvensnummer', async () => {
    const pid = newCitizen();
    const auth = await as(pid);
    for (const path of PATHS) {
      await request(h.get().app).post(path).set('Authorization', auth).expect(200);
    }
    expect(await status(pid)).toMatchObject({ aktiv: true, sekvensnummer: 1 });
    for (const path of PATHS) {
      await request(h.get().app).delete(path).set('Authorization', auth).expect(200);
    }
    expect(await status(pid)).toMatchObject({ aktiv: false, sekvensnummer: 2 });
  });

  it('when a consent never given is withdrawn, then 200 {} and nothing is written', async () => {
    const pid = newCitizen();
    await request(h.get().app)
      .delete(PATHS[1])
      .set('Authorization', await as(pid))
      .expect(200);
    expect(await youthSettings(pid)).toBe(0);
    expect(await status(pid)).toMatchObject({ aktiv: false });
  });

  it('when clients call in PascalCase or through the gateway prefix, then the same behaviour', async () => {
    const pid = newCitizen();
    const auth = await as(pid);
    await request(h.get().app).post('/V1/UngdomsApp').set('Authorization', auth).expect(200);
    await request(h.get().app)
      .delete('/personvern/ungdomsapp/V1')
      .set('Authorization', auth)
      .expect(200);
    expect(await status(pid)).toMatchObject({ aktiv: false, sekvensnummer: 2 });
  });

  it('when the client sends an empty JSON object, then it is accepted as no body', async () => {
    const pid = newCitizen();
    await request(h.get().app)
      .post(PATHS[0])
      .set('Authorization', await as(pid))
      .send({})
      .expect(200);
    expect(await status(pid)).toMatchObject({ aktiv: true });
  });

  it('when a system token calls, then 401 EPVK-100403 (the interface lists no 403)', async () => {
    const system = h.get().bearer(await h.get().token({ scopes: ['read', 'write', 'admin'] }));
    for (const path of PATHS) {
      for (const method of ['post', 'delete'] as const) {
        const res = await request(h.get().app)
          [method](path)
          .set('Authorization', system)
          .expect(401);
        expect(res.body).toEqual({
          code: 'EPVK-100403',
          message: expect.any(String),
          errorCategory: 'ClientValidationError',
        });
      }
    }
  });

  it('when there is no token, then 401 EPVK-100401', async () => {
    for (const path of PATHS) {
      const res = await request(h.get().app).post(path).expect(401);
      expect(res.body.code).toBe('EPVK-100401');
    }
  });

  it('when the token’s pid is not a valid identity number, then 400 EPVK-101518 and nothing is written', async () => {
    const res = await request(h.get().app)
      .post(PATHS[0])
      .set('Authorization', await as('13116950216'))
      .expect(400);
    expect(res.body).toMatchObject({ code: 'EPVK-101518', errorCategory: 'ClientValidationError' });
    expect(await youthSettings('13116950216')).toBe(0);
  });

  it('when the database cannot be reached, then 500 EPVK-100503', async () => {
    const logger = createLogger({ name: 'test', level: 'silent' });
    const connection = await connectMongo({ uri: h.get().infra.mongoUri, logger });
    await connection.close();
    const app = createApp({
      context: createPrivacyContext({ logger, connection, cacheTtlMs: 0 }),
      health: createHealth({ checks: {} }),
      authenticate: createPrivacyAuth({ ...h.get().issuer.authOptions(), logger }).authenticate,
    });
    const res = await request(app)
      .post(PATHS[1])
      .set('Authorization', await as(newCitizen()))
      .expect(500);
    expect(res.body).toMatchObject({ code: 'EPVK-100503', errorCategory: 'EndpointIsDown' });
  });

  it('when bodies are anything but empty, then always 400 ErrorResponse, never 500, and nothing is written', async () => {
    const pid = newCitizen();
    const auth = await as(pid);
    const bodies = fc
      .jsonValue({ maxDepth: 3 })
      .filter(
        (v) =>
          !(
            typeof v === 'object' &&
            v !== null &&
            !Array.isArray(v) &&
            Object.keys(v).length === 0
          ),
      );
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.constantFrom(...PATHS),
        fc.constantFrom('post', 'delete' as const),
        async (body, path, method) => {
          const res = await request(h.get().app)
            [method as 'post' | 'delete'](path)
            .set('Authorization', auth)
            .set('Content-Type', 'application/json')
            .send(JSON.stringify(body));
          expect(res.status).toBe(400);
          expect(Object.keys(res.body).sort()).toEqual(['code', 'errorCategory', 'message']);
        },
      ),
      { numRuns: 40 },
    );
    expect(await youthSettings(pid)).toBe(0);
  });
});
