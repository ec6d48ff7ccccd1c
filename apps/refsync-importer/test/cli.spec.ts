import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { SYNC_COMPLETED_EVENT_TYPE } from '@nhp/refsync-contracts';
import {
  freePort,
  scrapeMetrics,
  startNatsServer,
  useTestInfra,
  withDatabase,
} from '@nhp/shared-testing';
import { eventually, rg, tg, upstreamDir, writeUpstream } from './helpers';

const infra = useTestInfra();
const repoRoot = resolve(__dirname, '../../..');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the importer as `npm run refsync-importer` does (tsx, path aliases from tsconfig.base.json). */
function importer(args: string[], env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'apps/refsync-importer/src/main.ts', ...args],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        NATS_URL: infra.get().natsUrl,
        REFSYNC_LEASE_TTL_MS: '5000',
        TSX_TSCONFIG_PATH: resolve(repoRoot, 'tsconfig.base.json'),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const finished = new Promise<Finished>((done) =>
    child.on('exit', (code) => done({ code, ...out })),
  );
  return { child, out, finished };
}

describe('refsync-importer command line (child processes)', () => {
  let files: Awaited<ReturnType<typeof upstreamDir>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    files = await upstreamDir();
    env = {
      MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_cli`),
      REFSYNC_SOURCE_TREATMENT_GROUP: await writeUpstream(files.dir, 'tg.json', [
        tg('T1'),
        tg('T2'),
      ]),
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: await writeUpstream(files.dir, 'rg.json', [rg('R1')]),
    };
  });
  afterAll(async () => {
    await files.cleanup();
  });

  it('when --once commits, finds nothing, or aborts, then the exit code says so; --dry-run and --history print what happened', async () => {
    const committed = await importer(['--once'], env).finished;
    expect(committed.code).toBe(0);
    expect(committed.stdout).toMatch(/committed version 1 \(previous 0\)/);
    expect(committed.stdout).toMatch(/events published: 1/);
    expect(committed.stderr).toMatch(/"runId":"[0-9a-f-]{36}"/);

    const unchanged = await importer(['--once'], env).finished;
    expect(unchanged.code).toBe(0);
    expect(unchanged.stdout).toMatch(/nothing to commit; version stays 1/);

    await writeUpstream(files.dir, 'tg.json', [
      tg('T1', 'endret'),
      tg('T2'),
      tg('T3'),
      { id: 'T4' },
    ]);
    const aborted = await importer(['--once'], env).finished;
    expect(aborted.code).toBe(3);
    expect(aborted.stdout).toMatch(/aborted/);
    expect(aborted.stdout).toMatch(/treatmentGroup item #4 \(line \d+\) id "T4": name:/);

    await writeUpstream(files.dir, 'tg.json', [tg('T1', 'endret'), tg('T3')]);
    const dry = await importer(['--dry-run'], env).finished;
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/\+ T3/);
    expect(dry.stdout).toMatch(/~ T1/);
    expect(dry.stdout).toMatch(/- T2/);
    expect(dry.stdout).toMatch(
      /a real run would abort: treatmentGroup: the run would delete 1 of 2/,
    );

    const history = await importer(['--history'], env).finished;
    expect(history.code).toBe(0);
    const lines = history.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^started \(UTC\)/);
    expect(history.stdout).toMatch(/dry-run/);
    expect(history.stdout).toMatch(/aborted/);
    expect(history.stdout).toMatch(/unchanged/);
    expect(history.stdout).toMatch(/committed\s+0→1/);

    const usage = await importer(['--bogus'], env).finished;
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/usage: npm run refsync-importer/);
  }, 120_000);

  it('when NATS stays unreachable for REFSYNC_ONCE_PUBLISH_TIMEOUT_MS, then --once commits, exits 5 with the event kept, and the next run publishes it', async () => {
    const offline = {
      ...env,
      MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_offline`),
      NATS_URL: `nats://127.0.0.1:${await freePort()}`,
      REFSYNC_ONCE_PUBLISH_TIMEOUT_MS: '1500',
    };
    const committed = await importer(['--once'], offline).finished;
    expect(committed.code).toBe(5);
    expect(committed.stdout).toMatch(/committed version 1/);
    expect(committed.stdout).toMatch(
      /events pending: 1 .*after 1500 ms; they stay in the outbox .*publishes them when NATS is reachable/,
    );

    const next = await importer(['--once'], { ...offline, NATS_URL: infra.get().natsUrl }).finished;
    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(/nothing to commit/);
    expect(next.stdout).toMatch(/events published: 2/); // version 1's, then this run's
  }, 90_000);

  it('when NATS comes up while --once is still publishing, then the event is published before it exits 0', async () => {
    const natsPort = await freePort();
    const late = {
      ...env,
      MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_late_nats`),
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      REFSYNC_ONCE_PUBLISH_TIMEOUT_MS: '60000',
    };
    const run = importer(['--once'], late);
    let nats: Awaited<ReturnType<typeof startNatsServer>> | undefined;
    try {
      // Committed with NATS down; only then does NATS start, while the command keeps trying.
      await eventually(() => /committed version 1/.test(run.out.stdout), 'the commit');
      expect(run.child.exitCode).toBeNull();
      nats = await startNatsServer({ port: natsPort });
      const finished = await run.finished;
      expect(finished.code).toBe(0);
      expect(finished.stdout).toMatch(/events published: 1/);
    } finally {
      run.child.kill('SIGKILL');
      await nats?.dispose();
    }
  }, 90_000);

  it('when NODE_ENV is production and no source is set, then the importer refuses to start naming both variables', async () => {
    const refused = await importer(['--once'], {
      ...env,
      NODE_ENV: 'production',
      REFSYNC_IMPORTER_ADMIN_TOKEN: 'a-long-enough-production-token',
      REFSYNC_SOURCE_TREATMENT_GROUP: '',
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: '',
    }).finished;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /REFSYNC_SOURCE_TREATMENT_GROUP: required.*REFSYNC_SOURCE_REIMBURSEMENT_GROUP: required/,
    );
    expect(refused.stdout).toBe('');
  }, 60_000);

  it('when started without arguments, then the worker serves probes, says which admin token it accepts, and stops on SIGTERM', async () => {
    const port = await freePort();
    const worker = importer([], {
      ...env,
      MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_worker`),
      REFSYNC_IMPORTER_PORT: String(port),
      REFSYNC_IMPORTER_HOST: '127.0.0.1',
    });
    try {
      const deadline = Date.now() + 30_000;
      while (!worker.out.stdout.includes('refsync-importer listening')) {
        if (worker.child.exitCode !== null || Date.now() > deadline)
          throw new Error(`worker did not start: ${worker.out.stdout}${worker.out.stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(worker.out.stdout).toContain('local-admin-token');
      expect(worker.out.stdout).toMatch(/"nextRun":"\d{4}-/);
      const health = await fetch(`http://127.0.0.1:${port}/livez`);
      expect(health.status).toBe(200);
      // An empty store is synchronised at start, without waiting for the schedule.
      await eventually(async () => {
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return /refsync_importer_runs_total\{outcome="committed"\} 1/.test(metrics);
      }, 'the start-up run to commit');
      const sync = await fetch(`http://127.0.0.1:${port}/sync?wait=true`, {
        method: 'POST',
        headers: { authorization: 'Bearer local-admin-token' },
      });
      expect(sync.status).toBe(200);
      expect(await sync.json()).toMatchObject({ outcome: 'unchanged', trigger: 'http' });
    } finally {
      worker.child.kill('SIGTERM');
    }
    expect((await worker.finished).code).toBe(0);
  }, 60_000);

  it('when NATS is unreachable, then the worker is still ready (MongoDB only), its start-up sync commits, and /metrics shows NATS down, the event waiting in the outbox and the failed publishes', async () => {
    const port = await freePort();
    const natsPort = await freePort();
    const worker = importer([], {
      ...env,
      MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_nonats`),
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      REFSYNC_IMPORTER_PORT: String(port),
      REFSYNC_IMPORTER_HOST: '127.0.0.1',
    });
    try {
      await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
        return res?.status === 200;
      }, 'the worker to be ready without NATS');
      const readyz = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json();
      expect(readyz).toMatchObject({ status: 'degraded', degraded: ['nats'] });
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      const base = `http://127.0.0.1:${port}`;
      // The start-up sync of the empty store commits; its event cannot be published.
      const metrics = await eventually(async () => {
        const scrape = await scrapeMetrics(base);
        return (scrape.value('refsync_importer_events_publish_failed_total', {
          type: SYNC_COMPLETED_EVENT_TYPE,
        }) ?? 0) > 0 && scrape.value('refsync_importer_outbox_pending_events') === 1
          ? scrape
          : undefined;
      }, 'the start-up sync to commit and its publish to fail');
      expect(metrics.value('refsync_importer_nats_connected')).toBe(0);
      expect(metrics.value('refsync_importer_mongodb_connected')).toBe(1);
      expect(metrics.value('refsync_importer_runs_total', { outcome: 'committed' })).toBe(1);
      expect(
        metrics.value('refsync_importer_outbox_oldest_pending_age_seconds'),
      ).toBeGreaterThanOrEqual(0);
      expect(
        metrics.value('refsync_importer_events_published_total', {
          type: SYNC_COMPLETED_EVENT_TYPE,
        }),
      ).toBe(0);
    } finally {
      worker.child.kill('SIGTERM');
    }
    await worker.finished;
  }, 60_000);

  it('when MONGO_ENSURE_INDEXES is false and the database lacks an index, then the importer refuses to start, naming it', async () => {
    const refused = await importer(['--once'], {
      ...env,
      MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_noindex`),
      MONGO_ENSURE_INDEXES: 'false',
    }).finished;
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toContain('refsync_items.dataset_version_item');
    expect(refused.stderr + refused.stdout).toContain('npm run db-indexes');
  }, 60_000);

  it('when NODE_ENV is production and no admin token is set, then the importer refuses to start', async () => {
    const refused = await importer(['--once'], { ...env, NODE_ENV: 'production' }).finished;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/REFSYNC_IMPORTER_ADMIN_TOKEN: required in production/);
  }, 60_000);
});
