import request from 'supertest';
import { TEMPLATES, usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();
const PATH = '/innstillingdefinisjon/v1';

describe('GET /innstillingdefinisjon/v1?partKode=KODE', () => {
  it('when a client with the read scope and the party’s read grant lists, then 200 with every definition of the party and its fields as created', async () => {
    const { app, seedPart, seedDefinition, token, grant } = h.get();
    const part = await seedPart();
    const other = await seedPart();
    const a = await seedDefinition({
      partKode: part.partKode,
      navn: 'Samtykke A',
      replikering: true,
      sortering: 2,
    });
    const b = await seedDefinition({
      partKode: part.partKode,
      template: TEMPLATES.tilgangsbegrensning,
      relasjoner: [
        { definisjonGuid: a.definisjonGuid, relasjonType: 'erstatter', beskrivelse: null },
      ],
      status: 'inaktiv',
    });
    await seedDefinition({ partKode: other.partKode });
    await grant('reader', part.partKode, { read: true });

    const res = await request(app)
      .get(PATH)
      .query({ partKode: part.partKode })
      .set('Authorization', `Bearer ${await token({ clientId: 'reader', scopes: ['read'] })}`);

    expect(res.status).toBe(200);
    expect(res.body.partKode).toBe(part.partKode);
    const byGuid = new Map(
      (res.body.definisjoner as Array<{ definisjonGuid: string }>).map((d) => [
        d.definisjonGuid,
        d,
      ]),
    );
    expect([...byGuid.keys()].sort()).toEqual([a.definisjonGuid, b.definisjonGuid].sort());
    expect(byGuid.get(a.definisjonGuid)).toEqual({
      definisjonGuid: a.definisjonGuid,
      definisjonMalGuid: TEMPLATES.samtykke,
      partKode: part.partKode,
      navn: 'Samtykke A',
      beskrivelse: null,
      visning: null,
      fullstendigTekstInnhold: null,
      kravTilLesingAvFullstendigTekst: false,
      sortering: 2,
      replikering: true,
      relasjoner: [],
      status: 'aktiv',
      typePi: 'samtykke',
    });
    expect(byGuid.get(b.definisjonGuid)).toMatchObject({
      typePi: 'tilgangsbegrensning',
      status: 'inaktiv',
      relasjoner: [
        { definisjonGuid: a.definisjonGuid, relasjonType: 'erstatter', beskrivelse: null },
      ],
    });
  });

  it('when the client has only a write grant, or a grant on another party, then 200 with an empty list', async () => {
    const { app, seedPart, seedDefinition, token, grant } = h.get();
    const part = await seedPart();
    const other = await seedPart();
    await seedDefinition({ partKode: part.partKode });
    await grant('writer', part.partKode, { write: true });
    await grant('writer', other.partKode, { read: true });

    const res = await request(app)
      .get(PATH)
      .query({ partKode: part.partKode })
      .set(
        'Authorization',
        `Bearer ${await token({ clientId: 'writer', scopes: ['read', 'write'] })}`,
      );

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ partKode: part.partKode, definisjoner: [] });
  });

  it('when an admin lists without any grant, then 200 with every definition of the party', async () => {
    const { app, seedPart, seedDefinition, adminToken } = h.get();
    const part = await seedPart();
    const a = await seedDefinition({ partKode: part.partKode });
    const b = await seedDefinition({ partKode: part.partKode });

    const res = await request(app)
      .get(PATH)
      .query({ partKode: part.partKode })
      .set('Authorization', `Bearer ${await adminToken({ clientId: 'no-grants' })}`);

    expect(res.status).toBe(200);
    expect(res.body.definisjoner.map((d: { definisjonGuid: string }) => d.definisjonGuid)).toEqual(
      [a.definisjonGuid, b.definisjonGuid].sort(),
    );
  });

  it('when the token lacks the read scope, then 401 EPVK-100403', async () => {
    const { app, seedPart, token, grant } = h.get();
    const part = await seedPart();
    await grant('writer', part.partKode);
    const res = await request(app)
      .get(PATH)
      .query({ partKode: part.partKode })
      .set('Authorization', `Bearer ${await token({ clientId: 'writer', scopes: ['write'] })}`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('EPVK-100403');
  });

  it('when the party does not exist, then 400 EPVK-102404', async () => {
    const { app, token } = h.get();
    const res = await request(app)
      .get(PATH)
      .query({ partKode: 'no-such-party' })
      .set('Authorization', `Bearer ${await token()}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'EPVK-102404', errorCategory: 'ClientValidationError' });
  });

  it.each([
    ['partKode is missing', {}],
    ['an unknown query parameter comes', { partKode: 'x', pagingReference: '0' }],
    ['partKode is not a party code', { partKode: 'no such party' }],
    ['partKode comes twice', { partKode: ['a', 'b'] }],
  ])('when %s, then 400 EPVK-100400', async (_case, query) => {
    const { app, token } = h.get();
    const res = await request(app)
      .get(PATH)
      .query(query)
      .set('Authorization', `Bearer ${await token()}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'EPVK-100400', errorCategory: 'ClientValidationError' });
  });

  it('when a definition of the party is created, then the next listing shows it', async () => {
    const { app, seedPart, seedDefinition, adminToken } = h.get();
    const part = await seedPart();
    const auth = `Bearer ${await adminToken()}`;
    const before = await request(app)
      .get(PATH)
      .query({ partKode: part.partKode })
      .set('Authorization', auth);
    expect(before.body.definisjoner).toEqual([]);
    const created = await seedDefinition({ partKode: part.partKode });
    const after = await request(app)
      .get(PATH)
      .query({ partKode: part.partKode })
      .set('Authorization', auth);
    expect(
      after.body.definisjoner.map((d: { definisjonGuid: string }) => d.definisjonGuid),
    ).toEqual([created.definisjonGuid]);
  });
});
