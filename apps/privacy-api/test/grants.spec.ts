/**
 * Grants as clients meet them: a client that holds the scope but no grant from the definition's
 * party sees the definition exactly as an unknown one (EPVK-101500).
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();
const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
const FNR = '13116900216';

async function checkStatus(clientId: string, body: Record<string, unknown>) {
  const { app, bearer, token } = h.get();
  return request(app)
    .post(STATUS_PATH)
    .set('Authorization', bearer(await token({ clientId, scopes: ['read'] })))
    .send(body);
}

describe('grants', () => {
  it('when a client has no grant, then an existing definition answers as an unknown one', async () => {
    const definition = await h.get().seedDefinition();
    const body = {
      innbyggerFnr: FNR,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    };

    const withoutGrant = await checkStatus('stranger', body);
    const unknown = await checkStatus('stranger', { ...body, definisjonGuid: randomUUID() });
    expect(withoutGrant.status).toBe(400);
    expect(withoutGrant.body).toEqual(unknown.body);
    expect(withoutGrant.body.code).toBe('EPVK-101500');
  });

  it('when the party grants the client read, then the definition is readable, and not after a revoke', async () => {
    const { seedDefinition, grant, context } = h.get();
    const definition = await seedDefinition();
    const body = {
      innbyggerFnr: FNR,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    };

    await grant('reader', definition.partKode, { read: true });
    const granted = await checkStatus('reader', body);
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ definisjonGuid: definition.definisjonGuid, aktiv: false });

    await context.grants.revoke('reader', definition.partKode, {
      actor: { kind: 'admin', id: 'test' },
    });
    const revoked = await checkStatus('reader', body);
    expect(revoked.status).toBe(400);
    expect(revoked.body.code).toBe('EPVK-101500');
  });

  it('when a client’s grant is on another party, then it does not reach this one', async () => {
    const { seedDefinition, seedPart, grant } = h.get();
    const definition = await seedDefinition();
    const other = await seedPart();
    await grant('neighbour', other.partKode);
    const res = await checkStatus('neighbour', {
      innbyggerFnr: FNR,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-101500');
  });

  it('when a client has a write grant only, then reading is refused as unknown', async () => {
    const { seedDefinition, grant } = h.get();
    const definition = await seedDefinition();
    await grant('writer', definition.partKode, { write: true });
    const res = await checkStatus('writer', {
      innbyggerFnr: FNR,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    });
    expect(res.body.code).toBe('EPVK-101500');
  });

  it('when an admin-scope token reads, then it needs no grant', async () => {
    const { app, bearer, adminToken, seedDefinition } = h.get();
    const definition = await seedDefinition();
    const res = await request(app)
      .post(STATUS_PATH)
      .set('Authorization', bearer(await adminToken({ clientId: 'operator' })))
      .send({
        innbyggerFnr: FNR,
        definisjonGuid: definition.definisjonGuid,
        partKode: definition.partKode,
      });
    expect(res.status).toBe(200);
  });
});
