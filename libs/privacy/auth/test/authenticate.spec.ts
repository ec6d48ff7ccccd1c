import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import request from 'supertest';
import { createTestIssuer, type TestIssuer } from '@nhp/privacy-testing';
import { captureLogs, testApp, type LogCapture } from './helpers';

const PID = '13116900216';

describe('authenticate with Bearer tokens', () => {
  let issuer: TestIssuer;
  let logs: LogCapture;
  let app: ReturnType<typeof testApp>['app'];
  const minted: string[] = [];
  const mint = async (o: Parameters<TestIssuer['mint']>[0] = {}) => {
    const token = await issuer.mint(o);
    minted.push(token);
    return token;
  };

  beforeAll(async () => {
    issuer = await createTestIssuer();
    logs = captureLogs();
    ({ app } = testApp({ ...issuer.authOptions(), logger: logs.logger }));
  });

  afterAll(() => {
    // Every token (and the identity number) stayed out of the log, refused ones included.
    const text = logs.text();
    expect(text.length).toBeGreaterThan(0);
    for (const token of minted) expect(text).not.toContain(token.split('.')[1]);
    expect(text).not.toContain(PID);
  });

  const expect401 = (res: request.Response, category = 'authentication') => {
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'EPVK-100401', category });
    expect(res.headers['www-authenticate']).toMatch(/Bearer/);
    expect(res.headers['www-authenticate']).toMatch(/DPoP .*algs="ES256 PS256 RS256"/);
  };

  it('when a valid Bearer token with the read scope comes, then the caller is known with its claims', async () => {
    const token = await mint({ clientId: 'helsenorge-app', scopes: ['read'], pid: PID });
    const res = await request(app)
      .get('/whoami')
      .set('Authorization', `Bearer ${token}`)
      .set('X-Expect-Pid', PID);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      clientId: 'helsenorge-app',
      scopes: [issuer.scope('read')],
      citizen: true,
      pidMatches: true,
      scheme: 'Bearer',
      read: true,
      write: false,
      admin: false,
    });
  });

  it('when the scope claim is a space-separated string, then each scope counts', async () => {
    const token = await mint({ scopes: ['read', 'write', 'other:scope'], scopeAsString: true });
    const res = await request(app).get('/whoami').set('Authorization', `bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ read: true, write: true, admin: false, citizen: false });
    expect(res.body.scopes).toEqual([issuer.scope('read'), issuer.scope('write'), 'other:scope']);
  });

  it('when the token holds the admin scope, then it implies read and write', async () => {
    const token = await mint({ scopes: ['admin'] });
    const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect(res.body).toMatchObject({ read: true, write: true, admin: true });
  });

  it('when a scope of another audience comes, then it grants nothing', async () => {
    const token = await mint({ scopes: ['other:audience/personverninnstilling_admin'] });
    const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect(res.body).toMatchObject({ read: false, write: false, admin: false });
  });

  it('when the typ is JWT instead of at+jwt, then the token is accepted', async () => {
    const token = await mint({ typ: 'JWT' });
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
  });

  it('when no Authorization header comes, then 401 with a challenge without an error code', async () => {
    const res = await request(app).get('/whoami');
    expect401(res);
    expect(res.headers['www-authenticate']).not.toMatch(/error=/);
  });

  it.each([
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['no token', 'Bearer'],
    ['a token with spaces', 'Bearer abc def'],
    ['not a JWT', 'Bearer not-a-jwt'],
    ['a JWT-shaped string of garbage', 'Bearer aaaa.bbbb.cccc'],
  ])('when the Authorization header has %s, then 401', async (_name, header) => {
    const res = await request(app).get('/whoami').set('Authorization', header);
    expect401(res);
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_(token|request)"/);
  });

  it('when the token has expired (beyond the skew), then 401 with the expired category', async () => {
    const token = await mint({ iat: Math.floor(Date.now() / 1000) - 600, expiresInSec: 60 });
    const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect401(res, 'credentials-expired');
    expect(res.body.message).toMatch(/expired/);
  });

  it('when the token expired within the 30 s skew, then it is still accepted', async () => {
    const token = await mint({ iat: Math.floor(Date.now() / 1000) - 70, expiresInSec: 60 });
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
  });

  it('when the token is signed by another key under the same kid, then 401', async () => {
    const impostor = await createTestIssuer({ kid: issuer.kid });
    const token = await impostor.mint({ scopes: ['admin'] });
    minted.push(token);
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${token}`));
  });

  it('when the token is signed by an unknown key, then 401', async () => {
    const impostor = await createTestIssuer();
    const token = await impostor.mint({ scopes: ['admin'] });
    minted.push(token);
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${token}`));
  });

  it('when the payload is altered after signing, then 401', async () => {
    const token = await mint({ scopes: ['read'] });
    const [h, , s] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({
        iss: issuer.issuer,
        aud: issuer.audience,
        exp: Math.floor(Date.now() / 1000) + 300,
        scope: [issuer.scope('admin')],
      }),
    ).toString('base64url');
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${h}.${forged}.${s}`));
  });

  it('when the audience is another one, then 401 naming the aud claim', async () => {
    const token = await mint({ audience: 'someone-else' });
    const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect401(res);
    expect(res.body.message).toMatch(/aud/);
  });

  it('when the audience is a list that includes ours, then the token is accepted', async () => {
    const token = await mint({ audience: ['someone-else', issuer.audience] });
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
  });

  it('when the issuer is another one, then 401', async () => {
    const token = await mint({ issuer: 'https://evil.example' });
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${token}`));
  });

  it('when the token has no exp, then 401', async () => {
    const token = await mint({ extra: { exp: undefined } });
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${token}`));
  });

  it('when the token is unsigned (alg none), then 401', async () => {
    const token = new UnsecuredJWT({
      iss: issuer.issuer,
      aud: issuer.audience,
      scope: [issuer.scope('admin')],
    })
      .setExpirationTime('5m')
      .encode();
    minted.push(token);
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${token}`));
  });

  it('when the token is signed with a symmetric algorithm (HS256), then 401', async () => {
    const token = await new SignJWT({ iss: issuer.issuer, aud: issuer.audience })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: issuer.kid })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256'));
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${token}`));
  });

  it('when the token uses an algorithm outside RS256/PS256/ES256 (ES384), then 401', async () => {
    const other = await generateKeyPair('ES384');
    const token = await new SignJWT({ iss: issuer.issuer, aud: issuer.audience })
      .setProtectedHeader({ alg: 'ES384', typ: 'at+jwt', kid: issuer.kid })
      .setExpirationTime('5m')
      .sign(other.privateKey);
    expect401(await request(app).get('/whoami').set('Authorization', `Bearer ${token}`));
  });

  it.each([['dpop+jwt'], [null]])(
    'when the header typ is %s, then 401',
    async (typ: string | null) => {
      const token = await mint({ typ });
      const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
      expect401(res);
      expect(res.body.message).toMatch(/typ/);
    },
  );

  it.each([
    ['scope is a number', { scope: 7 }],
    ['scope is an array with a number', { scope: ['a', 1] }],
    ['client_id is a number', { client_id: 12 }],
    ['pid is empty', { pid: '' }],
    ['cnf is a string', { cnf: 'x' }],
  ])('when %s, then 401 and the claims are called malformed', async (_name, extra) => {
    const token = await mint({ extra });
    const res = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect401(res);
    expect(res.body.message).toMatch(/claims are malformed/);
  });

  /** A GET /whoami over a real socket, each header line as given (repeats included). */
  async function rawGet(lines: Array<[string, string]>) {
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      return await new Promise<{ status: number; body: { code?: string; message?: string } }>(
        (resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port, path: '/whoami' }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code?: string },
              }),
            );
          });
          req.on('error', reject);
          const byName = new Map<string, string[]>();
          for (const [name, value] of lines) byName.set(name, [...(byName.get(name) ?? []), value]);
          for (const [name, values] of byName) req.setHeader(name, values);
          req.end();
        },
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('when two Authorization headers come, then 401 whichever would pass, and one alone passes', async () => {
    const good = await mint({ scopes: ['read'] });
    const other = await mint({ scopes: ['read'], clientId: 'someone-else' });
    for (const pair of [
      [good, 'garbage'],
      ['garbage', good],
      [good, other],
    ]) {
      const res = await rawGet(pair.map((t) => ['Authorization', `Bearer ${t}`]));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'EPVK-100401' });
      expect(res.body.message).toMatch(/one Authorization header/);
    }
    expect((await rawGet([['Authorization', `Bearer ${good}`]])).status).toBe(200);
  });

  it('when a token comes in a non-canonical form (padding, base64 characters, spare bits), then 401', async () => {
    const token = await mint({ scopes: ['read'] });
    const [h, p, sig] = token.split('.') as [string, string, string];
    // The last character of a 64-byte signature carries 2 bits of it and 4 spare ones.
    const last = sig.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spare = alphabet[alphabet.indexOf(last) ^ 1] as string;
    expect(Buffer.from(`${sig.slice(0, -1)}${spare}`, 'base64url')).toEqual(
      Buffer.from(sig, 'base64url'),
    );
    const variants = [
      `${token}==`,
      `${h}.${p}.${sig.slice(0, -1)}${spare}`,
      `${h}.${p}.${sig.replace(/-/g, '+').replace(/_/g, '/')}`,
    ].filter((v) => v !== token);
    for (const variant of variants) {
      const res = await request(app).get('/whoami').set('Authorization', `Bearer ${variant}`);
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(/malformed/);
    }
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
  });

  it('when a route reads the caller without authenticate, then 500 (a programmer error), not a pass', async () => {
    const token = await mint({ scopes: ['admin'] });
    const res = await request(app)
      .get('/forgot-authenticate')
      .set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(500);
  });
});

describe('requireScope and requireCitizen', () => {
  let issuer: TestIssuer;
  let app: ReturnType<typeof testApp>['app'];

  beforeAll(async () => {
    issuer = await createTestIssuer();
    ({ app } = testApp(issuer.authOptions()));
  });

  it('when the read scope is missing on a 401 operation, then 401 EPVK-100403 with insufficient_scope', async () => {
    const token = await issuer.mint({ scopes: ['write'] });
    const res = await request(app).get('/read').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'EPVK-100403', category: 'authorization' });
    expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(res.headers['www-authenticate']).toContain(`scope="${issuer.scope('read')}"`);
  });

  it('when the read scope is present, then the read operation runs', async () => {
    const token = await issuer.mint({ scopes: ['read'] });
    expect((await request(app).get('/read').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
  });

  it('when the admin scope is missing on a 403 operation, then 403 EPVK-100403', async () => {
    const token = await issuer.mint({ scopes: ['read', 'write'] });
    const res = await request(app).post('/admin').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'EPVK-100403', category: 'authorization' });
  });

  it('when the admin scope is present, then the admin operation runs', async () => {
    const token = await issuer.mint({ scopes: ['admin'] });
    expect((await request(app).post('/admin').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
  });

  it('when a system token (no pid) calls a citizen operation, then it is refused like a missing scope', async () => {
    const token = await issuer.mint({ scopes: ['admin'] });
    const res = await request(app).post('/citizen').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'EPVK-100403', category: 'authorization' });
  });

  it('when a citizen token without scopes calls a citizen operation, then it runs', async () => {
    const token = await issuer.mint({ pid: PID });
    const res = await request(app).post('/citizen').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.citizen).toBe(true);
  });

  it('when no token comes to a scoped operation, then 401 EPVK-100401 (authentication first)', async () => {
    const res = await request(app).post('/admin');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('EPVK-100401');
  });
});
