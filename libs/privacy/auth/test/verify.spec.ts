import express from 'express';
import request from 'supertest';
import { AppError } from '@nhp/shared-errors';
import { createTestIssuer, type TestIssuer } from '@nhp/privacy-testing';
import { callerOf, createPrivacyAuth, setCaller, type PrivacyAuth } from '../src';

/**
 * PrivacyAuth.verify is the token check without Express (privacy-api's status fast path uses it);
 * `authenticate` trusts a caller a fast path already verified and bound with setCaller.
 */
describe('verify', () => {
  let issuer: TestIssuer;
  let auth: PrivacyAuth;

  beforeAll(async () => {
    issuer = await createTestIssuer();
    auth = createPrivacyAuth(issuer.authOptions());
  });

  it('when a Bearer token is valid, then verify returns its caller', async () => {
    const token = await issuer.mint({ clientId: 'acme', scopes: ['read'] });
    const caller = await auth.verify({
      method: 'POST',
      url: 'http://127.0.0.1/anything',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(caller.clientId).toBe('acme');
    expect(caller.scheme).toBe('Bearer');
    expect(caller.has('read')).toBe(true);
  });

  it('when there is no token, then verify rejects with a 401 AppError', async () => {
    const refusal = await auth
      .verify({ method: 'POST', url: 'http://127.0.0.1/anything', headers: {} })
      .catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).status).toBe(401);
  });

  it('when a DPoP proof was accepted once, then verify refuses it the second time', async () => {
    const key = await issuer.newDpopKey();
    const token = await issuer.mint({ clientId: 'acme', scopes: ['read'], dpopKey: key });
    const url = 'http://127.0.0.1:1234/personverninnstillinger/sjekkinnbyggerspistatus/v2';
    const proof = await issuer.dpopProof({ key, method: 'POST', url, accessToken: token });
    const input = { method: 'POST', url, headers: { authorization: `DPoP ${token}`, dpop: proof } };
    expect((await auth.verify(input)).scheme).toBe('DPoP');
    const replay = await auth.verify(input).catch((err: unknown) => err);
    expect((replay as AppError).status).toBe(401);
  });

  it('when one DPoP proof arrives on many requests at once, then exactly one is accepted', async () => {
    // The signature is checked off the event loop, so the copies' checks overlap; the jti is
    // remembered in the same turn as it is looked up, after the signature, so one copy wins.
    const key = await issuer.newDpopKey();
    const token = await issuer.mint({ clientId: 'acme', scopes: ['read'], dpopKey: key });
    const url = 'http://127.0.0.1:1234/personverninnstillinger/sjekkinnbyggerspistatus/v2';
    const proof = await issuer.dpopProof({ key, method: 'POST', url, accessToken: token });
    const input = { method: 'POST', url, headers: { authorization: `DPoP ${token}`, dpop: proof } };
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => auth.verify(input)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      expect((o.reason as AppError).status).toBe(401);
      expect((o.reason as AppError).message).toMatch(/used before/);
    }
  });

  it('when a request already carries a verified caller, then authenticate lets it through without a token, and without one it refuses', async () => {
    const token = await issuer.mint({ clientId: 'fast', scopes: ['read'] });
    const caller = await auth.verify({
      method: 'GET',
      url: 'http://127.0.0.1/whoami',
      headers: { authorization: `Bearer ${token}` },
    });
    const app = express();
    app.use((req, _res, next) => {
      if (req.get('x-preset') === 'yes') setCaller(req, caller);
      next();
    });
    app.get('/whoami', auth.authenticate, (req, res) => {
      res.json({ clientId: callerOf(req).clientId });
    });
    const preset = await request(app).get('/whoami').set('x-preset', 'yes');
    expect(preset.status).toBe(200);
    expect(preset.body).toEqual({ clientId: 'fast' });
    const plain = await request(app).get('/whoami');
    expect(plain.status).toBe(401);
  });
});
