/**
 * The app as a process: configuration failures and the graceful shutdown sequence, observed the
 * way an operator sees them (exit code, stderr, health probe).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { FAULT_SECRETS, freePort, processFaultsPreload, useTestInfra } from '@nhp/shared-testing';

const infra = useTestInfra();
const root = resolve(__dirname, '../../..');
const entry = resolve(__dirname, '../src/main.ts');

function runApp(env: Record<string, string>, preload: string[] = []) {
  const imports = preload.flatMap((path) => ['--import', path]);
  const child = spawn(process.execPath, ['--import', 'tsx', ...imports, entry], {
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
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  /** The JSON log lines written so far. */
  const lines = () =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { child, exited, stderr: () => stderr, output: () => stdout + stderr, lines };
}

async function healthy(port: number): Promise<boolean> {
  for (let i = 0; i < 150; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
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

  function runFaulty(fault: string, port: number) {
    return runApp(
      {
        PRIVACY_API_PORT: String(port),
        PRIVACY_API_HOST: '127.0.0.1',
        MONGO_URL: infra.get().mongoUri,
        NATS_URL: infra.get().natsUrl,
        LOG_LEVEL: 'info',
        TEST_PROCESS_FAULT: fault,
      },
      [processFaultsPreload],
    );
  }

  it.each(['programmer-rejection', 'uncaught-exception'])(
    'when the fault %s escapes every handler, then it logs fatal without the identity number or token, runs its shutdown steps and exits 1',
    async (fault) => {
      const port = await freePort();
      const app = runFaulty(fault, port);
      expect(await healthy(port)).toBe(true);

      app.child.kill('SIGUSR2');
      expect(await app.exited).toBe(1);
      const lines = app.lines();
      const fatal = lines.find((l) => l['level'] === 60);
      expect(fatal).toMatchObject({
        msg: expect.stringMatching(/shutting down$/),
        err: { message: expect.any(String), stack: expect.any(String) },
      });
      const steps = lines.filter((l) => l['msg'] === 'shutdown step done').map((l) => l['step']);
      expect(steps).toEqual(['readiness', 'http', 'journal', 'nats', 'mongo']);
      expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete', exitCode: 1 });
      expect(app.output()).not.toContain(FAULT_SECRETS.fnr);
      expect(app.output()).not.toContain(FAULT_SECRETS.token);
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    },
    60_000,
  );

  it('when an operational error escapes as an unhandled rejection, then it is logged at error and the service keeps serving until SIGTERM (exit 0)', async () => {
    const port = await freePort();
    const app = runFaulty('operational-rejection', port);
    expect(await healthy(port)).toBe(true);

    app.child.kill('SIGUSR2');
    let logged: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !logged; i++) {
      logged = app.lines().find((l) => l['code'] === 'DATABASE_UNAVAILABLE');
      if (!logged) await new Promise((r) => setTimeout(r, 50));
    }
    expect(logged).toMatchObject({
      level: 50,
      msg: 'unhandled rejection of an operational error; carrying on',
    });
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);

    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(app.lines().some((l) => l['level'] === 60)).toBe(false);
    expect(app.output()).not.toContain(FAULT_SECRETS.fnr);
  }, 60_000);
});
