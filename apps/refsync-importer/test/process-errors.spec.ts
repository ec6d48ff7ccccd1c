/**
 * The worker as a process when an error escapes every handler (a fault injected on SIGUSR2 by
 * @nhp/shared-testing's preload): a programmer error is logged at fatal without the identity
 * number or token it carries, the shutdown steps run and the process exits 1; an operational one
 * is logged at error and the worker keeps serving until SIGTERM.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import {
  FAULT_SECRETS,
  freePort,
  processFaultsPreload,
  useTestInfra,
  withDatabase,
} from '@nhp/shared-testing';
import { eventually, rg, tg, upstreamDir, writeUpstream } from './helpers';

const infra = useTestInfra();
const repoRoot = resolve(__dirname, '../../..');

describe('refsync-importer worker under escaped errors', () => {
  let files: Awaited<ReturnType<typeof upstreamDir>>;
  let sources: Record<string, string>;
  beforeAll(async () => {
    files = await upstreamDir();
    sources = {
      REFSYNC_SOURCE_TREATMENT_GROUP: await writeUpstream(files.dir, 'tg.json', [tg('T1')]),
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: await writeUpstream(files.dir, 'rg.json', [rg('R1')]),
    };
  });
  afterAll(async () => {
    await files.cleanup();
  });

  /** The worker with the fault preload, once it serves and its start-up run has committed. */
  async function startWorker(fault: string) {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', processFaultsPreload, 'apps/refsync-importer/src/main.ts'],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env['PATH'] ?? '',
          NODE_ENV: 'test',
          LOG_LEVEL: 'info',
          MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_${fault}`),
          NATS_URL: infra.get().natsUrl,
          REFSYNC_IMPORTER_PORT: String(port),
          REFSYNC_IMPORTER_HOST: '127.0.0.1',
          REFSYNC_LEASE_TTL_MS: '5000',
          TSX_TSCONFIG_PATH: resolve(repoRoot, 'tsconfig.base.json'),
          TEST_PROCESS_FAULT: fault,
          ...sources,
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
    // The shutdown (and the error policy with it) is installed once the start-up run has begun.
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`worker exited early: ${output}`);
      const metrics = await fetch(`${base}/metrics`)
        .then((r) => r.text())
        .catch(() => '');
      return /refsync_importer_runs_total\{outcome="committed"\} 1/.test(metrics);
    }, 'the start-up run to commit');
    return { child, exited, lines, output: () => output, base };
  }

  it('when a programmer error escapes as an unhandled rejection, then the worker logs fatal without secrets, runs its shutdown steps and exits 1', async () => {
    const worker = await startWorker('programmer-rejection');
    worker.child.kill('SIGUSR2');
    expect(await worker.exited).toBe(1);
    const lines = worker.lines();
    expect(lines.find((l) => l['level'] === 60)).toMatchObject({
      msg: 'unhandled rejection of a programmer error; shutting down',
      err: { type: 'TypeError', stack: expect.any(String) },
    });
    expect(lines.filter((l) => l['msg'] === 'shutdown step done').map((l) => l['step'])).toEqual([
      'mark not ready',
      'stop schedule',
      'close HTTP server',
      'stop publisher, drain NATS, close MongoDB',
    ]);
    expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete', exitCode: 1 });
    expect(worker.output()).not.toContain(FAULT_SECRETS.fnr);
    expect(worker.output()).not.toContain(FAULT_SECRETS.token);
  }, 60_000);

  it('when an operational error escapes as an unhandled rejection, then it is logged at error and the worker keeps serving until SIGTERM (exit 0)', async () => {
    const worker = await startWorker('operational-rejection');
    worker.child.kill('SIGUSR2');
    await eventually(
      async () =>
        worker
          .lines()
          .some(
            (l) =>
              l['level'] === 50 &&
              l['msg'] === 'unhandled rejection of an operational error; carrying on',
          ),
      'the operational rejection to be logged',
    );
    expect((await fetch(`${worker.base}/livez`)).status).toBe(200);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.lines().some((l) => l['level'] === 60)).toBe(false);
    expect(worker.output()).not.toContain(FAULT_SECRETS.fnr);
  }, 60_000);
});
