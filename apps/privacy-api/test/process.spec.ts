/**
 * The app as a process: configuration failures and the graceful shutdown sequence, observed the
 * way an operator sees them (exit code, stderr, health probe).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort, useTestInfra } from '@nhp/shared-testing';

const infra = useTestInfra();
const root = resolve(__dirname, '../../..');
const entry = resolve(__dirname, '../src/main.ts');

function runApp(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: {
      PATH: process.env['PATH'] ?? '',
      TSX_TSCONFIG_PATH: resolve(root, 'tsconfig.base.json'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout.resume();
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, exited, stderr: () => stderr };
}

describe('privacy-api process', () => {
  it('when variables are invalid, then it exits non-zero with one message naming each of them', async () => {
    const app = runApp({
      PRIVACY_API_PORT: 'abc',
      MONGO_URL: 'http://not-mongo',
      SHUTDOWN_TIMEOUT_MS: '-5',
    });
    const code = await app.exited;
    expect(code).not.toBe(0);
    const message = app.stderr();
    expect(message).toContain('PRIVACY_API_PORT');
    expect(message).toContain('MONGO_URL');
    expect(message).toContain('SHUTDOWN_TIMEOUT_MS');
    expect(message).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('when it receives SIGTERM, then it stops serving, closes its connections and exits 0', async () => {
    const port = await freePort();
    const app = runApp({
      PRIVACY_API_PORT: String(port),
      PRIVACY_API_HOST: '127.0.0.1',
      MONGO_URL: infra.get().mongoUri,
      NATS_URL: infra.get().natsUrl,
    });
    let healthy = false;
    for (let i = 0; i < 150 && !healthy; i++) {
      healthy = await fetch(`http://127.0.0.1:${port}/health`)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (!healthy) await new Promise((r) => setTimeout(r, 100));
    }
    expect(healthy).toBe(true);

    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  }, 60_000);
});
