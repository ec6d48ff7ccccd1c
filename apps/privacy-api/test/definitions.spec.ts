import { randomUUID } from 'node:crypto';
import { DEFINITIONS_COLLECTION } from '@nhp/privacy-data-access';
import { YOUTH_APP_DEFINITION_GUID } from '@nhp/privacy-domain';
import request from 'supertest';
import { TEMPLATES, usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();
const PATH = '/innstillingdefinisjon/v1';

async function admin(): Promise<string> {
  return h.get().bearer(await h.get().adminToken({ clientId: 'admin-client' }));
}

describe('POST /innstillingdefinisjon/v1', () => {
  it('when an admin creates a definition from a template, then 201 {} and it is stored aktiv with the template’s type and fixed metadata', async () => {
    const { app, seedPart, context } = h.get();
    const part = await seedPart();
    const related = await h.get().seedDefinition({ partKode: part.partKode });
    const definisjonGuid = randomUUID();
    const res = await request(app)
      .post(PATH)
      .set('Authorization', await admin())
      .send({
        definisjonMalGuid: TEMPLATES.tilgangsbegrensning,
        definisjonGuid: definisjonGuid.toUpperCase(),
        partKode: part.partKode,
        navn: 'Sperring',
        kravTilLesingAvFullstendigTekst: true,
        sortering: 3,
        replikering: true,
        relasjoner: [{ definisjonGuid: related.definisjonGuid, relasjonType: 'erstatter' }],
      });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({});
    const stored = await context.definitions.findDefinition(definisjonGuid);
    expect(stored).toMatchObject({
      definisjonGuid,
      partKode: part.partKode,
      navn: 'Sperring',
      status: 'aktiv',
      typePi: 'tilgangsbegrensning',
      kravTilLesingAvFullstendigTekst: true,
      sortering: 3,
      replikering: true,
      relasjoner: [
        { definisjonGuid: related.definisjonGuid, relasjonType: 'erstatter', beskrivelse: null },
      ],
    });
    expect(stored?.fasteMetadata.detaljertAngivelse?.rolleTilPasient).toContain('Fastlege');
    const trail = await context.journal.listAudit({ definisjonGuid });
    expect(trail.map((r) => r.operation)).toEqual(['definition.create']);
  });

  it('when the definisjonGuid exists, then 400 EPVK-103409 and the definition is unchanged', async () => {
    const { app, seedDefinition, context } = h.get();
    const existing = await seedDefinition({ navn: 'Original' });
    const res = await request(app)
      .post(PATH)
      .set('Authorization', await admin())
      .send({
        definisjonMalGuid: TEMPLATES.reservasjon,
        definisjonGuid: existing.definisjonGuid,
        partKode: existing.partKode,
        navn: 'Other',
      });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-103409');
    const stored = await context.definitions.findDefinition(existing.definisjonGuid);
    expect(stored).toMatchObject({ navn: 'Original', typePi: 'samtykke' });
  });

  it.each([
    ['the template is unknown', 'EPVK-103404', { definisjonMalGuid: randomUUID() }],
    [
      'a related definition is unknown',
      'EPVK-103404',
      { relasjoner: [{ definisjonGuid: randomUUID() }] },
    ],
    ['the party is unknown', 'EPVK-102404', { partKode: 'no-such-party' }],
  ])('when %s, then 400 %s and nothing is stored', async (_case, code, override) => {
    const { app, seedPart, count } = h.get();
    const part = await seedPart();
    const definisjonGuid = randomUUID();
    const res = await request(app)
      .post(PATH)
      .set('Authorization', await admin())
      .send({
        definisjonMalGuid: TEMPLATES.samtykke,
        definisjonGuid,
        partKode: part.partKode,
        ...override,
      });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code,
      message: expect.any(String),
      errorCategory: 'ClientValidationError',
    });
    expect(await count(DEFINITIONS_COLLECTION, { _id: definisjonGuid })).toBe(0);
  });

  it.each([
    ['definisjonMalGuid', { definisjonMalGuid: undefined }],
    ['definisjonGuid', { definisjonGuid: undefined }],
    ['partKode', { partKode: null }],
    ['farge', { farge: 'blå' }],
    ['definisjonGuid', { definisjonGuid: 'not-a-guid' }],
    ['sortering', { sortering: 2 ** 31 }],
    ['sortering', { sortering: 1.5 }],
    ['replikering', { replikering: 'true' }],
    ['kravTilLesingAvFullstendigTekst', { kravTilLesingAvFullstendigTekst: null }],
    ['relasjoner[0].farge', { relasjoner: [{ farge: 1 }] }],
  ])('when %s is missing or invalid, then 400 EPVK-100400 naming it', async (field, override) => {
    const { app, seedPart } = h.get();
    const part = await seedPart();
    const res = await request(app)
      .post(PATH)
      .set('Authorization', await admin())
      .send({
        definisjonMalGuid: TEMPLATES.samtykke,
        definisjonGuid: randomUUID(),
        partKode: part.partKode,
        ...override,
      });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-100400');
    expect(res.body.message).toContain(field.replace(/\[0\].*/, ''));
  });

  it('when a token lacks the admin scope, then 401 EPVK-100403 (the interface lists no 403 here)', async () => {
    const { app, token, bearer, seedPart, count } = h.get();
    const part = await seedPart();
    const definisjonGuid = randomUUID();
    const res = await request(app)
      .post(PATH)
      .set('Authorization', bearer(await token({ scopes: ['read', 'write'] })))
      .send({ definisjonMalGuid: TEMPLATES.samtykke, definisjonGuid, partKode: part.partKode });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('EPVK-100403');
    expect(await count(DEFINITIONS_COLLECTION, { _id: definisjonGuid })).toBe(0);
  });

  it('when there is no token, then 401 EPVK-100401', async () => {
    const res = await request(h.get().app).post(PATH).send({});
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('EPVK-100401');
  });

  it('when the service has started, then the youth-app definition exists, owned by helsenorge', async () => {
    const definition = await h.get().context.definitions.findDefinition(YOUTH_APP_DEFINITION_GUID);
    expect(definition).toMatchObject({
      partKode: 'helsenorge',
      typePi: 'samtykke',
      status: 'aktiv',
    });
  });
});

describe('PATCH /innstillingdefinisjon/v1', () => {
  it('when an admin changes the updatable fields, then 204 and they are stored, the rest unchanged', async () => {
    const { app, seedDefinition, context } = h.get();
    const definition = await seedDefinition({ navn: 'Keep', visning: 'old' });
    const res = await request(app)
      .patch(PATH)
      .set('Authorization', await admin())
      .send({
        definisjonGuid: definition.definisjonGuid,
        visning: 'new',
        kravTilLesingAvFullstendigTekst: true,
        sortering: 7,
        replikering: true,
        status: 'Inaktiv',
      });
    expect(res.status).toBe(204);
    expect(await context.definitions.findDefinition(definition.definisjonGuid)).toMatchObject({
      navn: 'Keep',
      visning: 'new',
      kravTilLesingAvFullstendigTekst: true,
      sortering: 7,
      replikering: true,
      status: 'inaktiv',
    });
    const trail = await context.journal.listAudit({ definisjonGuid: definition.definisjonGuid });
    expect(trail.map((r) => r.operation)).toEqual(['definition.create', 'definition.update']);
  });

  it('when fields are null or absent, then they stay as they are', async () => {
    const { app, seedDefinition, context } = h.get();
    const definition = await seedDefinition({ visning: 'v', sortering: 2 });
    const res = await request(app)
      .patch(PATH)
      .set('Authorization', await admin())
      .send({ definisjonGuid: definition.definisjonGuid, visning: null, status: 'aktiv' });
    expect(res.status).toBe(204);
    expect(await context.definitions.findDefinition(definition.definisjonGuid)).toMatchObject({
      visning: 'v',
      sortering: 2,
      status: 'aktiv',
    });
  });

  it('when the status is neither aktiv nor inaktiv, then 400 EPVK-100400 and nothing changes', async () => {
    const { app, seedDefinition, context } = h.get();
    const definition = await seedDefinition();
    const res = await request(app)
      .patch(PATH)
      .set('Authorization', await admin())
      .send({ definisjonGuid: definition.definisjonGuid, status: 'slettet', sortering: 9 });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-100400');
    expect(res.body.message).toContain('status');
    expect(await context.definitions.findDefinition(definition.definisjonGuid)).toMatchObject({
      status: 'aktiv',
      sortering: null,
    });
  });

  it('when the definition is unknown, then 400 EPVK-101500', async () => {
    const res = await request(h.get().app)
      .patch(PATH)
      .set('Authorization', await admin())
      .send({ definisjonGuid: randomUUID(), status: 'inaktiv' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-101500');
  });

  it('when a field that cannot be changed is sent, then 400 EPVK-100400 naming it', async () => {
    const { app, seedDefinition } = h.get();
    const definition = await seedDefinition();
    const res = await request(app)
      .patch(PATH)
      .set('Authorization', await admin())
      .send({ definisjonGuid: definition.definisjonGuid, navn: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-100400');
    expect(res.body.message).toContain('navn');
  });

  it('when a token lacks the admin scope, then 401 EPVK-100403 and nothing changes', async () => {
    const { app, token, bearer, seedDefinition, context } = h.get();
    const definition = await seedDefinition();
    const res = await request(app)
      .patch(PATH)
      .set('Authorization', bearer(await token()))
      .send({ definisjonGuid: definition.definisjonGuid, status: 'inaktiv' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('EPVK-100403');
    expect((await context.definitions.findDefinition(definition.definisjonGuid))?.status).toBe(
      'aktiv',
    );
  });
});
