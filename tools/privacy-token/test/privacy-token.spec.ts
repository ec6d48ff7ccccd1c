import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import request from 'supertest';
import {
  callerOf,
  createPrivacyAuth,
  privacyAuthOptionsFromConfig,
  requireCitizen,
  requireScope,
} from '@nhp/privacy-auth';
import { removeDevStack, writeDevStack } from '@nhp/shared-config';
import { createHttpApp } from '@nhp/shared-http';
import { createLogger } from '@nhp/shared-logger';
import { run } from '../src/main';

const AUDIENCE = 'nhn:helsenorge.eksternapi';

describe('npm run privacy-token', () => {
  let dir: string;
  let server: Server;
  let base: string;

  async function cli(...argv: string[]) {
    let out = '';
    let err = '';
    const code = await run(argv, {
      out: (t) => (out += t),
      err: (t) => (err += t),
      env: { DEV_DATA_DIR: dir },
    });
    return { code, out, err };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'privacy-token-'));
    // privacy-api's view: the configuration without an issuer, i.e. the development key.
    const auth = createPrivacyAuth(
      await privacyAuthOptionsFromConfig(
        { NODE_ENV: 'development', PRIVACY_AUTH_AUDIENCE: AUDIENCE },
        { devDataDir: dir },
      ),
    );
    const app = createHttpApp({
      logger: createLogger({ name: 'privacy-token-test', level: 'silent' }),
      errorFormatter: (e) => ({
        status: e.status,
        contentType: 'application/json',
        body: { code: e.code, message: e.message },
      }),
      routes: (a) => {
        a.get('/whoami', auth.authenticate, (req, res) => {
          const c = callerOf(req);
          res.json({ clientId: c.clientId, admin: c.has('admin'), scheme: c.scheme });
        });
        a.post('/admin', auth.authenticate, requireScope('admin', 403), (_req, res) => {
          res.json({});
        });
        a.post('/citizen', auth.authenticate, requireCitizen(403), (_req, res) => {
          res.json({});
        });
      },
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('when asked for help, then it prints the usage and succeeds', async () => {
    const { code, out } = await cli('--help');
    expect(code).toBe(0);
    expect(out).toMatch(/^Usage: npm run privacy-token/);
    expect(out).toContain('--dpop');
  });

  it.each([
    [['--scope', 'read,superuser'], /unknown scope "superuser"/],
    [['--pid', '13116950216'], /--pid must be a valid/],
    [['--expires-in', '0'], /--expires-in/],
    [['--expires-in', '1h'], /--expires-in/],
    [['--client', 'has space'], /--client/],
    [['--frobnicate'], /Unknown option/],
    [['positional'], /positional/],
    [['--method', 'GET'], /--method needs --dpop/],
    [['--dpop', '--url', 'http://x/y'], /--dpop needs --method/],
    [['--dpop', '--method', 'GET', '--url', 'not-a-url'], /--dpop needs --url/],
    [
      ['--dpop', '--method', 'GET', '--url', 'http://x/y', '--token', 'abc'],
      /--token needs --dpop-key/,
    ],
  ])(
    'when the arguments are %j, then it exits 2 with a clear error and writes nothing',
    async (argv, message) => {
      const before = await readdir(dir);
      const { code, out, err } = await cli(...argv);
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err).toMatch(message);
      expect(err).toMatch(/--help/);
      expect(await readdir(dir)).toEqual(before);
    },
  );

  it('when a system token with the admin scope is minted, then privacy-api accepts it for an admin operation', async () => {
    const { code, out } = await cli('--scope', 'admin', '--client', 'my-system');
    expect(code).toBe(0);
    const token = out.trim();
    expect(decodeJwt(token)).toMatchObject({
      client_id: 'my-system',
      aud: AUDIENCE,
      scope: [`${AUDIENCE}/personverninnstilling_admin`],
    });
    const res = await request(base).post('/admin').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    // A system token is no citizen.
    const citizen = await request(base).post('/citizen').set('Authorization', `Bearer ${token}`);
    expect(citizen.status).toBe(403);
  });

  it('when a citizen token is minted, then it passes a citizen operation and not an admin one', async () => {
    const { out } = await cli('--pid', '13116900216');
    const token = out.trim();
    expect(
      (await request(base).post('/citizen').set('Authorization', `Bearer ${token}`)).status,
    ).toBe(200);
    expect(
      (await request(base).post('/admin').set('Authorization', `Bearer ${token}`)).status,
    ).toBe(403);
  });

  it('when another audience is asked for, then privacy-api refuses the token with 401', async () => {
    const { out } = await cli('--scope', 'admin', '--audience', 'someone-else');
    const res = await request(base).post('/admin').set('Authorization', `Bearer ${out.trim()}`);
    expect(res.status).toBe(401);
  });

  it('when a DPoP-bound token is minted with a kept key, then its proof works once and a new proof for the same token works again', async () => {
    const keyFile = join(dir, 'client-dpop-key.json');
    const url = `${base}/whoami`;
    const first = await cli(
      '--dpop',
      '--dpop-key',
      keyFile,
      '--method',
      'GET',
      '--url',
      url,
      '--json',
    );
    expect(first.code).toBe(0);
    const minted = JSON.parse(first.out);
    expect(minted).toMatchObject({ tokenType: 'DPoP', audience: AUDIENCE });
    expect(decodeJwt(minted.accessToken).cnf).toEqual({ jkt: minted.jkt });

    const call = (proof: string) =>
      request(base)
        .get('/whoami')
        .set('Authorization', `DPoP ${minted.accessToken}`)
        .set('DPoP', proof);
    const ok = await call(minted.dpopProof);
    expect(ok.status).toBe(200);
    expect(ok.body.scheme).toBe('DPoP');
    expect((await call(minted.dpopProof)).status).toBe(401); // replayed

    const again = await cli(
      '--dpop',
      '--dpop-key',
      keyFile,
      '--token',
      minted.accessToken,
      '--method',
      'GET',
      '--url',
      url,
    );
    const [token, proof] = again.out.trim().split('\n');
    expect(token).toBe(minted.accessToken);
    expect((await call(proof as string)).status).toBe(200);
  });

  it('when --init runs, then it names the key files and the issuer', async () => {
    const { code, out } = await cli('--init', '--json');
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      issuer: 'http://localhost:3004',
      jwksFile: join(dir, 'privacy-dev-jwks.json'),
    });
  });
  it('when npm start runs its issuer on another port, then the token names the issuer the stack trusts', async () => {
    await writeDevStack(dir, {
      mongoUrl: 'mongodb://127.0.0.1:1/nhp',
      natsUrl: 'nats://127.0.0.1:1',
      privacyAuthIssuer: 'http://localhost:41004',
    });
    try {
      const res = await cli('--scope', 'read');
      expect(res.code).toBe(0);
      expect(decodeJwt(res.out.trim()).iss).toBe('http://localhost:41004');
    } finally {
      await removeDevStack(dir);
    }
    const res = await cli('--scope', 'read');
    expect(decodeJwt(res.out.trim()).iss).toBe('http://localhost:3004');
  });
});
