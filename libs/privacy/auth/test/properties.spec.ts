import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import request from 'supertest';
import { createTestIssuer, type TestIssuer } from '@nhp/privacy-testing';
import { testApp } from './helpers';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const headerText = fc.stringMatching(/^[\x20-\x7e]{0,300}$/);

/**
 * Whatever a client sends as credentials, the answer is a 401 with our code: never a 500, never a
 * pass. The generators aim at the parser (any header text), at the claim checks (JWT-shaped
 * strings with arbitrary JSON in header and payload) and at the DPoP proof (arbitrary proofs
 * with a valid bound token).
 */
describe('authenticate, property-based', () => {
  let issuer: TestIssuer;
  let app: ReturnType<typeof testApp>['app'];

  beforeAll(async () => {
    issuer = await createTestIssuer();
    ({ app } = testApp(issuer.authOptions()));
  });

  const refused = (res: request.Response) => res.status === 401 && res.body?.code === 'EPVK-100401';

  it('when the Authorization header is any text, then the answer is 401 EPVK-100401', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          headerText,
          headerText.map((t) => `Bearer ${t}`),
          headerText.map((t) => `DPoP ${t}`),
        ),
        async (authorization) => {
          const res = await request(app).get('/whoami').set('Authorization', authorization);
          expect(refused(res)).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('when a JWT-shaped token carries arbitrary JSON, then the answer is 401 EPVK-100401', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue(),
          fc.record({
            alg: fc.constantFrom('ES256', 'none', 'HS256'),
            typ: fc.constantFrom('at+jwt', 'JWT'),
            kid: fc.constant(issuer.kid),
          }),
        ),
        fc.oneof(
          fc.jsonValue(),
          fc.record({
            iss: fc.constant(issuer.issuer),
            aud: fc.oneof(fc.constant(issuer.audience), fc.jsonValue()),
            exp: fc.oneof(fc.integer(), fc.jsonValue()),
            scope: fc.jsonValue(),
            pid: fc.jsonValue(),
            cnf: fc.jsonValue(),
          }),
        ),
        fc
          .base64String({ maxLength: 100 })
          .map((s) => s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')),
        async (header, payload, signature) => {
          const token = `${b64(header)}.${b64(payload)}.${signature}`;
          const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
          expect(refused(res)).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('when a valid bound token comes with an arbitrary DPoP header, then the answer is 401 EPVK-100401', async () => {
    // A listening server, so that a proof can name the real URL and only the fuzzed claims are wrong.
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/whoami`;
    try {
      const key = await issuer.newDpopKey();
      const token = await issuer.mint({ dpopKey: key });
      // Sanity: the unfuzzed proof passes, so each refusal below is the fuzzed claim's doing.
      const valid = await issuer.dpopProof({ key, method: 'GET', url, accessToken: token });
      const ok = await request(url)
        .get('')
        .set('Authorization', `DPoP ${token}`)
        .set('DPoP', valid);
      expect(ok.status).toBe(200);

      const wrongClaims = fc
        .record(
          { htm: fc.jsonValue(), htu: fc.jsonValue(), iat: fc.jsonValue(), ath: fc.jsonValue() },
          { requiredKeys: [] },
        )
        .filter((extra) => Object.keys(extra).length > 0);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            headerText,
            fc.tuple(fc.jsonValue(), fc.jsonValue()).map(([h, p]) => `${b64(h)}.${b64(p)}.c2ln`),
            wrongClaims.map((extra) => ({ extra })),
          ),
          async (proof) => {
            const dpop =
              typeof proof === 'string'
                ? proof
                : await issuer.dpopProof({
                    key,
                    method: 'GET',
                    url,
                    accessToken: token,
                    extra: proof.extra as Record<string, unknown>,
                  });
            const res = await request(url)
              .get('')
              .set('Authorization', `DPoP ${token}`)
              .set('DPoP', dpop);
            expect(refused(res)).toBe(true);
          },
        ),
        { numRuns: 100 },
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
