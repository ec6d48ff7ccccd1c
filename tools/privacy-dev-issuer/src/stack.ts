/**
 * privacy-api with everything it needs, as processes on loopback and free ports: nats-server, the
 * MongoDB-compatible server, the development issuer and privacy-api trusting the issuer through
 * its JWKS URL, as it would trust HelseID. For the tests of the client and the mirror.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  freePort,
  startAppProcess,
  startMongoServerProcess,
  startNatsServer,
  type AppProcess,
  type MongoServerProcess,
  type NatsServerProcess,
} from '@nhp/shared-testing';
import { registerClient, type NewClient, type RegisteredClient } from './clients';

const ROOT = resolve(__dirname, '../../..');

export interface PrivacyStack {
  nats: NatsServerProcess;
  mongo: MongoServerProcess;
  mongoUrl: string;
  issuer: AppProcess;
  issuerUrl: string;
  api: AppProcess;
  apiUrl: string;
  dataDir: string;
  /** Registers a client with the running issuer (public key in its clients file). */
  register(client: NewClient): Promise<RegisteredClient>;
  /** `npm run privacy-admin -- <args>` against the stack's database and NATS. */
  admin(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startPrivacyStack(
  options: { apiEnv?: Record<string, string> } = {},
): Promise<PrivacyStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'privacy-stack-'));
  const nats = await startNatsServer();
  const mongo = await startMongoServerProcess();
  const mongoUrl = `${mongo.uri}/privacy-stack`;
  const issuerPort = await freePort();
  const issuerUrl = `http://127.0.0.1:${issuerPort}`;
  const started: AppProcess[] = [];
  try {
    const issuer = await startAppProcess({
      name: 'privacy-dev-issuer',
      entry: 'tools/privacy-dev-issuer/src/main.ts',
      port: issuerPort,
      portVariable: 'PRIVACY_DEV_ISSUER_PORT',
      healthPath: '/.well-known/openid-configuration',
      env: {
        DEV_DATA_DIR: dataDir,
        PRIVACY_DEV_ISSUER_HOST: '127.0.0.1',
        PRIVACY_DEV_ISSUER_URL: issuerUrl,
        LOG_LEVEL: 'warn',
      },
    });
    started.push(issuer);
    const api = await startAppProcess({
      name: 'privacy-api',
      entry: 'apps/privacy-api/src/main.ts',
      portVariable: 'PRIVACY_API_PORT',
      env: {
        PRIVACY_API_HOST: '127.0.0.1',
        MONGO_URL: mongoUrl,
        NATS_URL: nats.url,
        LOG_LEVEL: 'warn',
        DEV_DATA_DIR: dataDir,
        PRIVACY_AUTH_ISSUER: issuerUrl,
        PRIVACY_AUTH_JWKS_URL: `${issuerUrl}/jwks`,
        ...options.apiEnv,
      },
    });
    started.push(api);
    return {
      nats,
      mongo,
      mongoUrl,
      issuer,
      issuerUrl,
      api,
      apiUrl: api.url,
      dataDir,
      register: (client) => registerClient(dataDir, client),
      admin: (...args) => runAdmin(mongoUrl, nats.url, args),
      async stop() {
        await Promise.all(started.map((p) => p.stop()));
        await Promise.all([nats.dispose(), mongo.dispose()]);
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(started.map((p) => p.stop()));
    await Promise.all([nats.dispose(), mongo.dispose()]);
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

function runAdmin(mongoUrl: string, natsUrl: string, args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(ROOT, 'tools/privacy-admin/src/main.ts'), ...args],
      {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'] ?? '',
          TSX_TSCONFIG_PATH: resolve(ROOT, 'tsconfig.base.json'),
          MONGO_URL: mongoUrl,
          // privacy-api hears of the change at once, as it would from an operator's run.
          NATS_URL: natsUrl,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.once('exit', (code) =>
      code === 0
        ? resolvePromise(out)
        : reject(new Error(`privacy-admin ${args[0]} exited ${code}: ${out}`)),
    );
  });
}
