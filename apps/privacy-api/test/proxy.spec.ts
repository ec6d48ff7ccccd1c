import { randomUUID } from 'node:crypto';
import { newDpopKey } from '@nhp/privacy-testing';
import request from 'supertest';
import { usePrivacyHarness } from './support/harness';

const PUBLIC_URL = 'https://api.helse.example/part/v1';

async function createPartBehindGateway(h: ReturnType<ReturnType<typeof usePrivacyHarness>['get']>) {
  const key = await newDpopKey();
  const token = await h.adminToken({ dpopKey: key });
  const proof = await h.issuer.dpopProof({
    key,
    method: 'POST',
    url: PUBLIC_URL,
    accessToken: token,
  });
  return request(h.app)
    .post('/part/v1')
    .set('Authorization', `DPoP ${token}`)
    .set('DPoP', proof)
    .set('X-Forwarded-Proto', 'https')
    .set('X-Forwarded-Host', 'api.helse.example')
    .send({ partKode: `gw-${randomUUID().slice(0, 8)}`, navn: 'Gateway' });
}

describe('behind a gateway that terminates TLS (HTTP_TRUST_PROXY)', () => {
  describe('when the gateway is trusted', () => {
    const harness = usePrivacyHarness({ options: { trustProxy: 'loopback' } });

    it('when a DPoP proof names the public https URL, then it matches the forwarded URL and the request is served', async () => {
      const res = await createPartBehindGateway(harness.get());
      expect(res.status).toBe(201);
    });
  });

  describe('when no proxy is trusted (the default)', () => {
    const harness = usePrivacyHarness();

    it('when a DPoP proof names the public https URL, then forwarded headers do not count and the proof is refused', async () => {
      const res = await createPartBehindGateway(harness.get());
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'EPVK-100401' });
    });
  });
});
