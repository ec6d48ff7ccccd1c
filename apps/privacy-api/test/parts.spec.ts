import { AUDIT_COLLECTION, PARTS_COLLECTION } from '@nhp/privacy-data-access';
import request from 'supertest';
import { usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();

const newPartKode = () => `p-${Math.random().toString(36).slice(2, 10)}`;

describe('POST /part/v1 and PUT /part/v1', () => {
  it('when an admin creates a party, then 201 {} and the party and its audit record are stored', async () => {
    const { app, adminToken, bearer, context } = h.get();
    const partKode = newPartKode();
    const res = await request(app)
      .post('/part/v1')
      .set('Authorization', bearer(await adminToken({ clientId: 'admin-client' })))
      .set('X-Request-Id', 'req-part-1')
      .send({ partKode, navn: 'Sykehuset', kortNavn: 'SH', uri: 'https://sh.example' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({});
    expect(await context.parts.find(partKode)).toEqual({
      partKode,
      navn: 'Sykehuset',
      kortNavn: 'SH',
      beskrivelse: null,
      uri: 'https://sh.example',
    });
    const trail = await context.journal.listAudit({ partKode });
    expect(trail).toEqual([
      expect.objectContaining({
        operation: 'part.create',
        actor: { kind: 'client', id: 'admin-client' },
        requestId: 'req-part-1',
      }),
    ]);
    await h.get().journalIdle();
    expect(await h.get().count(AUDIT_COLLECTION, { 'target.partKode': partKode })).toBe(1);
  });

  it('when the party exists, then POST is 400 EPVK-102409 and the party is unchanged', async () => {
    const { app, adminToken, bearer, seedPart, context } = h.get();
    const part = await seedPart({ navn: 'Original' });
    const res = await request(app)
      .post('/part/v1')
      .set('Authorization', bearer(await adminToken()))
      .send({ partKode: part.partKode, navn: 'Other' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'EPVK-102409',
      message: expect.stringContaining(part.partKode),
      errorCategory: 'ClientValidationError',
    });
    expect((await context.parts.find(part.partKode))?.navn).toBe('Original');
  });

  it('when an admin updates a party, then 204 and every field is replaced', async () => {
    const { app, adminToken, bearer, seedPart, context } = h.get();
    const part = await seedPart({ navn: 'Before', kortNavn: 'B' });
    const res = await request(app)
      .put('/part/v1')
      .set('Authorization', bearer(await adminToken()))
      .send({ partKode: part.partKode, navn: 'After', beskrivelse: 'ny' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await context.parts.find(part.partKode)).toEqual({
      partKode: part.partKode,
      navn: 'After',
      kortNavn: null,
      beskrivelse: 'ny',
      uri: null,
    });
    const operations = (await context.journal.listAudit({ partKode: part.partKode })).map(
      (r) => r.operation,
    );
    expect(operations).toEqual(['part.create', 'part.update']);
  });

  it('when the party to update is unknown, then 400 EPVK-102404 and nothing is created', async () => {
    const { app, adminToken, bearer, count } = h.get();
    const partKode = newPartKode();
    const res = await request(app)
      .put('/part/v1')
      .set('Authorization', bearer(await adminToken()))
      .send({ partKode, navn: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-102404');
    expect(await count(PARTS_COLLECTION, { _id: partKode })).toBe(0);
  });

  it.each(['post', 'put'] as const)(
    'when a token lacks the admin scope (%s), then 403 EPVK-100403 and nothing is written',
    async (method) => {
      const { app, token, bearer, count } = h.get();
      const partKode = newPartKode();
      const res = await request(app)
        [method]('/part/v1')
        .set('Authorization', bearer(await token({ scopes: ['read', 'write'] })))
        .send({ partKode });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        code: 'EPVK-100403',
        message: expect.any(String),
        errorCategory: 'ClientValidationError',
      });
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      expect(await count(PARTS_COLLECTION, { _id: partKode })).toBe(0);
    },
  );

  it('when a citizen token calls, then 403 EPVK-100403', async () => {
    const { app, citizenToken, bearer } = h.get();
    const res = await request(app)
      .post('/part/v1')
      .set('Authorization', bearer(await citizenToken('13116900216')))
      .send({ partKode: newPartKode() });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('EPVK-100403');
  });

  it.each(['post', 'put'] as const)(
    'when there is no token (%s), then 401 EPVK-100401',
    async (method) => {
      const res = await request(h.get().app)[method]('/part/v1').send({ partKode: newPartKode() });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        code: 'EPVK-100401',
        message: expect.any(String),
        errorCategory: 'ClientValidationError',
      });
    },
  );

  it('when the token has the wrong audience, then 401 EPVK-100401', async () => {
    const { app, adminToken, bearer } = h.get();
    const res = await request(app)
      .post('/part/v1')
      .set('Authorization', bearer(await adminToken({ audience: 'someone-else' })))
      .send({ partKode: newPartKode() });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('EPVK-100401');
  });

  it.each([
    ['an unknown property', { partKode: 'x1', farge: 'blå' }, 'farge'],
    ['a number for a string', { partKode: 'x2', navn: 5 }, 'navn'],
    ['a partKode with a dot', { partKode: 'a.b' }, 'partKode'],
    ['no partKode', { navn: 'x' }, 'partKode'],
    ['a null partKode', { partKode: null }, 'partKode'],
  ])('when the body has %s, then 400 EPVK-100400 naming the field', async (_case, body, field) => {
    const { app, adminToken, bearer, count } = h.get();
    const res = await request(app)
      .post('/part/v1')
      .set('Authorization', bearer(await adminToken()))
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-100400');
    expect(res.body.errorCategory).toBe('ClientValidationError');
    expect(res.body.message).toContain(field);
    const partKode = (body as { partKode?: unknown }).partKode;
    if (typeof partKode === 'string')
      expect(await count(PARTS_COLLECTION, { _id: partKode })).toBe(0);
  });

  it('when the null fields are omitted, then the party is created with nulls', async () => {
    const { app, adminToken, bearer, context } = h.get();
    const partKode = newPartKode();
    const res = await request(app)
      .post('/part/v1')
      .set('Authorization', bearer(await adminToken()))
      .send({ partKode });
    expect(res.status).toBe(201);
    expect(await context.parts.find(partKode)).toEqual({
      partKode,
      navn: null,
      kortNavn: null,
      beskrivelse: null,
      uri: null,
    });
  });

  it('when the built-in party is asked for, then it exists after start', async () => {
    expect((await h.get().context.parts.find('helsenorge'))?.navn).toBe('Helsenorge');
  });
});
