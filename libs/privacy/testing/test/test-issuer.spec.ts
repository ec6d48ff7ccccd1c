import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, EmbeddedJWK, jwtVerify } from 'jose';
import { accessTokenHash, createTestIssuer } from '../src';

describe('createTestIssuer', () => {
  it('when a token is minted, then it verifies against the published keys with the expected claims', async () => {
    const issuer = await createTestIssuer();
    const token = await issuer.mint({
      clientId: 'c1',
      scopes: ['read', 'x:y'],
      pid: '13116900216',
    });
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(issuer.jwks), {
      issuer: issuer.issuer,
      audience: issuer.audience,
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: issuer.kid });
    expect(payload).toMatchObject({
      client_id: 'c1',
      scope: [`${issuer.audience}/personverninnstilling_read`, 'x:y'],
      pid: '13116900216',
    });
    expect(payload.exp).toBe((payload.iat as number) + 300);
    expect(await issuer.bearer()).toMatch(/^Bearer eyJ/);
  });

  it('when asked for a string scope, no client id and no typ, then the token says so', async () => {
    const issuer = await createTestIssuer({ alg: 'PS256' });
    const token = await issuer.mint({
      scopes: ['read', 'write'],
      scopeAsString: true,
      clientId: null,
      typ: null,
    });
    expect(decodeJwt(token).scope).toBe(`${issuer.scope('read')} ${issuer.scope('write')}`);
    expect(decodeJwt(token).client_id).toBeUndefined();
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'PS256', kid: issuer.kid });
  });

  it('when a token is bound to a DPoP key, then cnf.jkt is its thumbprint and the proof carries the key and ath', async () => {
    const issuer = await createTestIssuer();
    const key = await issuer.newDpopKey();
    const token = await issuer.mint({ dpopKey: key });
    expect(decodeJwt(token).cnf).toEqual({ jkt: key.jkt });
    const proof = await issuer.dpopProof({
      key,
      method: 'POST',
      url: 'https://x.example/a',
      accessToken: token,
      jti: 'j1',
    });
    const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt' });
    expect(protectedHeader.jwk).toEqual(key.publicJwk);
    expect(payload).toMatchObject({
      htm: 'POST',
      htu: 'https://x.example/a',
      jti: 'j1',
      ath: accessTokenHash(token),
    });
  });
});
