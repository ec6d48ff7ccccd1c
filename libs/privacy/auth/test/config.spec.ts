import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import request from 'supertest';
import { createTestIssuer } from '@nhp/privacy-testing';
import {
  DEV_ISSUER,
  DEV_JWKS_FILE,
  DEV_KEY_FILE,
  ensureDevKey,
  loadDevKey,
  privacyAuthOptionsFromConfig,
} from '../src';
import { testApp } from './helpers';

const AUDIENCE = 'nhn:helsenorge.eksternapi';

describe('privacyAuthOptionsFromConfig', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'privacy-auth-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const config = (extra: Record<string, string | undefined> = {}) => ({
    NODE_ENV: 'development',
    PRIVACY_AUTH_AUDIENCE: AUDIENCE,
    ...extra,
  });

  it('when nothing is configured outside production, then the development key is created and trusted', async () => {
    const options = await privacyAuthOptionsFromConfig(config(), { devDataDir: dir });
    expect(options.issuer).toBe(DEV_ISSUER);
    expect(options.jwks).toEqual({ file: join(dir, DEV_JWKS_FILE) });
    expect((await stat(join(dir, DEV_KEY_FILE))).mode & 0o077).toBe(0);

    // A token signed with the development key (as privacy-token does) is accepted.
    const devKey = await loadDevKey(dir);
    const token = await new SignJWT({
      scope: [`${AUDIENCE}/personverninnstilling_admin`],
      client_id: 'dev',
    })
      .setProtectedHeader({ alg: devKey.alg, kid: devKey.kid, typ: 'at+jwt' })
      .setIssuer(devKey.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(devKey.privateKey);
    const { app } = testApp(options);
    const res = await request(app).post('/admin').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
  });

  it('when the development key exists, then it is reused, not replaced', async () => {
    const first = await ensureDevKey(dir);
    const second = await ensureDevKey(dir);
    expect(second.kid).toBe(first.kid);
    const jwks = JSON.parse(await readFile(join(dir, DEV_JWKS_FILE), 'utf8'));
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0].kid).toBe(first.kid);
    expect(jwks.keys[0].d).toBeUndefined();
  });

  it('when no development key exists, then loadDevKey says how to make one', async () => {
    await expect(loadDevKey(dir)).rejects.toThrow(/npm start/);
  });

  it('when the key file is not a development key, then it says so', async () => {
    await writeFile(join(dir, DEV_KEY_FILE), '{"hello":1}');
    await expect(ensureDevKey(dir)).rejects.toThrow(/not a development key file/);
  });

  it('when issuer and a JWKS file are configured, then they are used', async () => {
    const issuer = await createTestIssuer();
    const file = join(dir, 'jwks.json');
    await writeFile(file, JSON.stringify(issuer.jwks));
    const options = await privacyAuthOptionsFromConfig(
      config({ PRIVACY_AUTH_ISSUER: issuer.issuer, PRIVACY_AUTH_JWKS_FILE: file }),
      { devDataDir: dir },
    );
    expect(options).toMatchObject({ issuer: issuer.issuer, jwks: { file }, audience: AUDIENCE });
    const { app } = testApp(options);
    const token = await issuer.mint();
    expect((await request(app).get('/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(
      200,
    );
  });

  it('when issuer and a JWKS URL are configured in production, then they are used', async () => {
    const options = await privacyAuthOptionsFromConfig(
      config({
        NODE_ENV: 'production',
        PRIVACY_AUTH_ISSUER: 'https://idp.example',
        PRIVACY_AUTH_JWKS_URL: 'https://idp.example/jwks',
      }),
    );
    expect(options.jwks).toEqual({ url: 'https://idp.example/jwks' });
  });

  it.each([
    ['production without anything', { NODE_ENV: 'production' }, /In production/],
    [
      'production with an issuer only',
      { NODE_ENV: 'production', PRIVACY_AUTH_ISSUER: 'https://idp' },
      /In production/,
    ],
    ['an issuer without a key source', { PRIVACY_AUTH_ISSUER: 'https://idp' }, /no key source/],
    ['a key source without an issuer', { PRIVACY_AUTH_JWKS_FILE: '/x.json' }, /ISSUER is not/],
    [
      'both a URL and a file',
      {
        PRIVACY_AUTH_ISSUER: 'https://idp',
        PRIVACY_AUTH_JWKS_URL: 'https://idp/jwks',
        PRIVACY_AUTH_JWKS_FILE: '/x.json',
      },
      /not both/,
    ],
  ])('when %s, then a start-up error names the variables', async (_name, extra, message) => {
    await expect(privacyAuthOptionsFromConfig(config(extra), { devDataDir: dir })).rejects.toThrow(
      message,
    );
    // Nothing was created on the way.
    await expect(stat(join(dir, DEV_KEY_FILE))).rejects.toThrow();
  });

  it('when the JWKS file is missing or not a key set, then creating the auth fails clearly', async () => {
    const issuer = await createTestIssuer();
    expect(() =>
      testApp({ ...issuer.authOptions(), jwks: { file: join(dir, 'none.json') } }),
    ).toThrow(/cannot read the JWKS file/);
    await writeFile(join(dir, 'bad.json'), '{"nokeys":true}');
    expect(() =>
      testApp({ ...issuer.authOptions(), jwks: { file: join(dir, 'bad.json') } }),
    ).toThrow(/not a JWKS document/);
  });
});
