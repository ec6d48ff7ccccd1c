import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONWebKeySet } from 'jose';
import request from 'supertest';
import { createTestIssuer, type TestIssuer } from '@nhp/privacy-testing';
import { createPrivacyAuth, type PrivacyAuth } from '../src';
import { testApp } from './helpers';

/** An identity provider's JWKS endpoint on loopback, whose key set the test changes and whose fetches it counts. */
async function startJwksServer(initial: JSONWebKeySet) {
  let jwks = initial;
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    fetches += 1;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    fetches: () => fetches,
    publish: (next: JSONWebKeySet) => {
      jwks = next;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('JWKS from a URL', () => {
  let a: TestIssuer;
  let b: TestIssuer;
  let jwks: Awaited<ReturnType<typeof startJwksServer>>;

  beforeAll(async () => {
    a = await createTestIssuer();
    b = await createTestIssuer({ issuer: a.issuer });
  });

  beforeEach(async () => {
    jwks = await startJwksServer(a.jwks);
  });

  afterEach(async () => {
    await jwks.close();
  });

  it('when the issuer rotates to a new key, then a token with the unknown kid makes one refetch and is accepted', async () => {
    const { app } = testApp({ ...a.authOptions(), jwks: { url: jwks.url, cooldownMs: 0 } });
    const first = await a.mint({ scopes: ['read'] });
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${first}`)).status).toBe(
      200,
    );
    expect(jwks.fetches()).toBe(1);

    jwks.publish({ keys: [...a.jwks.keys, ...b.jwks.keys] });
    const rotated = await b.mint({ scopes: ['read'] });
    expect(
      (await request(app).get('/whoami').set('Authorization', `Bearer ${rotated}`)).status,
    ).toBe(200);
    expect(jwks.fetches()).toBe(2);

    // A token of the old key still verifies from the refreshed set, without another fetch.
    const again = await a.mint({ scopes: ['read'] });
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${again}`)).status).toBe(
      200,
    );
    expect(jwks.fetches()).toBe(2);
  });

  it('when unknown kids arrive within the cooldown, then the JWKS is not fetched again (rate limit)', async () => {
    const { app } = testApp({ ...a.authOptions(), jwks: { url: jwks.url, cooldownMs: 600_000 } });
    const known = await a.mint();
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${known}`)).status).toBe(
      200,
    );
    for (let i = 0; i < 3; i++) {
      const stranger = await (await createTestIssuer({ issuer: a.issuer })).mint();
      const res = await request(app).get('/whoami').set('Authorization', `Bearer ${stranger}`);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('EPVK-100401');
    }
    expect(jwks.fetches()).toBe(1);
  });

  it('when the JWKS endpoint cannot be reached, then the request fails as an outage (EPVK-100503), not as bad credentials', async () => {
    await jwks.close();
    const { app } = testApp({ ...a.authOptions(), jwks: { url: jwks.url, timeoutMs: 2_000 } });
    const token = await a.mint();
    const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ code: 'EPVK-100503', category: 'unavailable' });
    jwks = await startJwksServer(a.jwks); // for afterEach
  });
});

describe('JWKS from a file', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'privacy-auth-jwks-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Replaces the file and moves its mtime on, as a deployment replacing a mounted secret does. */
  async function replace(file: string, content: string, secondsAhead: number) {
    await writeFile(file, content);
    const when = new Date(Date.now() + secondsAhead * 1000);
    await utimes(file, when, when);
  }

  it('when the file is replaced with a rotated key set, then tokens of the new key are accepted without a restart', async () => {
    const a = await createTestIssuer();
    const b = await createTestIssuer({ issuer: a.issuer });
    const file = join(dir, 'jwks.json');
    await writeFile(file, JSON.stringify(a.jwks));
    const { app } = testApp({ ...a.authOptions(), jwks: { file } });
    const call = async (token: string) =>
      (await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status;

    expect(await call(await b.mint())).toBe(401);
    await replace(file, JSON.stringify({ keys: [...a.jwks.keys, ...b.jwks.keys] }), 10);
    expect(await call(await b.mint())).toBe(200);
    expect(await call(await a.mint())).toBe(200);
  });

  it('when the file is replaced with something unusable, then the keys in use stay', async () => {
    const a = await createTestIssuer();
    const b = await createTestIssuer({ issuer: a.issuer });
    const file = join(dir, 'jwks.json');
    await writeFile(file, JSON.stringify(a.jwks));
    const { app } = testApp({ ...a.authOptions(), jwks: { file } });
    await replace(file, '{"keys": [', 10);
    const status = async (token: string) =>
      (await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status;
    expect(await status(await b.mint())).toBe(401);
    expect(await status(await a.mint())).toBe(200);
    // Once it is fixed, it is read.
    await replace(file, JSON.stringify({ keys: [...a.jwks.keys, ...b.jwks.keys] }), 20);
    expect(await status(await b.mint())).toBe(200);
  });
});

describe('verified-token cache', () => {
  let issuer: TestIssuer;
  let clockMs: number;

  beforeAll(async () => {
    issuer = await createTestIssuer();
  });

  beforeEach(() => {
    clockMs = Date.now();
  });

  it('when the same token comes twice, then its signature is checked once', async () => {
    const { app, auth } = testApp({ ...issuer.authOptions(), now: () => clockMs });
    const token = await issuer.mint({ scopes: ['admin'] });
    for (let i = 0; i < 3; i++) {
      const res = await request(app).post('/admin').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
    }
    expect(auth.stats()).toEqual({ tokenVerifications: 1, tokenCacheHits: 2 });
  });

  it('when a different token comes, then it is verified on its own', async () => {
    const { app, auth } = testApp({ ...issuer.authOptions(), now: () => clockMs });
    for (const scopes of [['read'], ['write']]) {
      const token = await issuer.mint({ scopes });
      await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    }
    expect(auth.stats().tokenVerifications).toBe(2);
  });

  it('when a cached token expires (beyond the skew), then it is refused as expired', async () => {
    const { app, auth } = testApp({ ...issuer.authOptions(), now: () => clockMs });
    const token = await issuer.mint({ expiresInSec: 60, iat: Math.floor(clockMs / 1000) });
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
    clockMs += 60_000 + 29_000;
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
    clockMs += 2_000;
    const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.body.category).toBe('credentials-expired');
    expect(auth.stats()).toEqual({ tokenVerifications: 2, tokenCacheHits: 1 });
  });

  it('when a cached DPoP-bound token comes as Bearer, then the binding is still enforced', async () => {
    const { app } = testApp({ ...issuer.authOptions(), now: () => clockMs });
    const key = await issuer.newDpopKey();
    const token = await issuer.mint({ dpopKey: key });
    // Warm the cache with a refused Bearer use, then again: both refused.
    for (let i = 0; i < 2; i++) {
      const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(401);
    }
  });

  it('when the cache is turned off, then every call verifies', async () => {
    const { app, auth } = testApp({ ...issuer.authOptions(), tokenCacheSize: 0 });
    const token = await issuer.mint();
    await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect(auth.stats()).toEqual({ tokenVerifications: 2, tokenCacheHits: 0 });
  });

  describe('the Bearer token last accepted on a connection', () => {
    const check = (auth: PrivacyAuth, connection: object | undefined, authorization: string) =>
      auth.verify({
        method: 'GET',
        url: 'http://api.test/whoami',
        headers: { authorization },
        connection,
      });

    it('when it comes again on its connection, then it is known without the token cache', async () => {
      // A cache of one: another connection's token pushes this one out of it.
      const auth = createPrivacyAuth({ ...issuer.authOptions(), tokenCacheSize: 1 });
      const [first, second] = [{}, {}];
      const mine = `Bearer ${await issuer.mint({ clientId: 'mine' })}`;
      const theirs = `Bearer ${await issuer.mint({ clientId: 'theirs' })}`;
      expect((await check(auth, first, mine)).clientId).toBe('mine');
      expect((await check(auth, second, theirs)).clientId).toBe('theirs');
      expect((await check(auth, first, mine)).clientId).toBe('mine');
      expect(auth.stats()).toEqual({ tokenVerifications: 2, tokenCacheHits: 1 });
      // Not shared between connections, nor kept without one.
      expect((await check(auth, second, mine)).clientId).toBe('mine');
      expect((await check(auth, undefined, theirs)).clientId).toBe('theirs');
      expect(auth.stats()).toEqual({ tokenVerifications: 4, tokenCacheHits: 1 });
    });

    it('when it has expired (beyond the skew), then it is refused on its connection too', async () => {
      const auth = createPrivacyAuth({ ...issuer.authOptions(), now: () => clockMs });
      const connection = {};
      const token = await issuer.mint({ expiresInSec: 60, iat: Math.floor(clockMs / 1000) });
      await check(auth, connection, `Bearer ${token}`);
      clockMs += 60_000 + 31_000;
      await expect(check(auth, connection, `Bearer ${token}`)).rejects.toMatchObject({
        status: 401,
        category: 'credentials-expired',
      });
    });

    it('when another header comes on the connection, then that one is checked', async () => {
      const auth = createPrivacyAuth(issuer.authOptions());
      const connection = {};
      const token = await issuer.mint();
      await check(auth, connection, `Bearer ${token}`);
      await expect(check(auth, connection, `Bearer ${token}x`)).rejects.toMatchObject({
        status: 401,
      });
      // A DPoP-bound token sent as Bearer on a connection that had a good one: still refused.
      const bound = await issuer.mint({ dpopKey: await issuer.newDpopKey() });
      await expect(check(auth, connection, `Bearer ${bound}`)).rejects.toMatchObject({
        status: 401,
      });
      expect((await check(auth, connection, `Bearer ${token}`)).clientId).toBeDefined();
    });

    it('when the token cache is off, then every request on a connection is checked', async () => {
      const auth = createPrivacyAuth({ ...issuer.authOptions(), tokenCacheSize: 0 });
      const connection = {};
      const authorization = `Bearer ${await issuer.mint()}`;
      await check(auth, connection, authorization);
      await check(auth, connection, authorization);
      expect(auth.stats()).toEqual({ tokenVerifications: 2, tokenCacheHits: 0 });
    });
  });
});
