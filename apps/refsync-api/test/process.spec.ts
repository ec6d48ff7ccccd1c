/**
 * refsync-api as a process when an error escapes every handler (a fault injected on SIGUSR2 by
 * @nhp/shared-testing's preload): a programmer error is logged at fatal without the identity
 * number or token it carries, the shutdown steps run and the process exits 1; an operational one
 * is logged at error and the service keeps serving until SIGTERM.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { FAULT_SECRETS, freePort, processFaultsPreload, useTestInfra } from '@nhp/shared-testing';

const infra = useTestInfra();
const root = resolve(__dirname, '../../..');
const entry = resolve(__dirname, '../src/main.ts');

async function startApp(fault: string) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', processFaultsPreload, entry],
    {
      cwd: root,
      env: {
        PATH: process.env['PATH'] ?? '',
        TSX_TSCONFIG_PATH: resolve(root, 'tsconfig.base.json'),
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        REFSYNC_API_PORT: String(port),
        REFSYNC_API_HOST: '127.0.0.1',
        MONGO_URL: infra.get().mongoUri,
        NATS_URL: infra.get().natsUrl,
        TEST_PROCESS_FAULT: fault,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const lines = () =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const base = `http://127.0.0.1:${port}`;
  let live = false;
  for (let i = 0; i < 150 && !live && child.exitCode === null; i++) {
    live = await fetch(`${base}/livez`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (!live) await new Promise((r) => setTimeout(r, 100));
  }
  if (!live) throw new Error(`refsync-api did not start: ${output}`);
  return { child, exited, lines, output: () => output, base };
}

describe('refsync-api process under escaped errors', () => {
  it('when a programmer error escapes as an unhandled rejection, then it logs fatal without secrets, runs its shutdown steps and exits 1', async () => {
    const app = await startApp('programmer-rejection');
    app.child.kill('SIGUSR2');
    expect(await app.exited).toBe(1);
    const lines = app.lines();
    expect(lines.find((l) => l['level'] === 60)).toMatchObject({
      msg: 'unhandled rejection of a programmer error; shutting down',
      err: { type: 'TypeError', stack: expect.any(String) },
    });
    expect(lines.filter((l) => l['msg'] === 'shutdown step done').map((l) => l['step'])).toEqual([
      'readiness',
      'http',
      'refsync-api',
      'nats',
      'mongo',
    ]);
    expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete', exitCode: 1 });
    expect(app.output()).not.toContain(FAULT_SECRETS.fnr);
    expect(app.output()).not.toContain(FAULT_SECRETS.token);
  }, 60_000);

  it('when an operational error escapes as an unhandled rejection, then it is logged at error and the service keeps serving until SIGTERM (exit 0)', async () => {
    const app = await startApp('operational-rejection');
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
    expect((await fetch(`${app.base}/livez`)).status).toBe(200);
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(app.lines().some((l) => l['level'] === 60)).toBe(false);
    expect(app.output()).not.toContain(FAULT_SECRETS.fnr);
  }, 60_000);
});
