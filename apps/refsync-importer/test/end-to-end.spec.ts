import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { SYNC_COMPLETED_SUBJECT } from '@nhp/refsync-contracts';
import { readSampleData, sampleDataPath } from '@nhp/refsync-sample-data';
import { connectNats, drainNats, type NatsConnection } from '@nhp/shared-messaging';
import { AsyncApiContract, freePort, useTestInfra } from '@nhp/shared-testing';
import type { ImporterContext } from '../src/context';
import { syncCompletedEvent } from '@nhp/refsync-data-access';
import { eventually, quietLogger, startContext, testConfig, upstreamDir } from './helpers';

const infra = useTestInfra();
const repoRoot = resolve(__dirname, '../../..');

describe('end to end: importer -> NATS -> refsync-api', () => {
  let files: Awaited<ReturnType<typeof upstreamDir>>;
  let importer: ImporterContext;
  let api: ChildProcess;
  let apiBase: string;
  let apiOutput = '';
  let observer: NatsConnection;
  const events: Array<{
    id: string;
    data: { currentVersion: number; datasets: Record<string, unknown> };
  }> = [];
  /** Every received event is checked against the contract the repository holds (docs/asyncapi). */
  const contract = AsyncApiContract.fromFile('docs/asyncapi/refsync-importer.json');
  const problems: string[] = [];

  beforeAll(async () => {
    files = await upstreamDir();
    const tgFile = join(files.dir, 'treatment-groups.json');
    const rgFile = join(files.dir, 'reimbursement-groups.json');
    await copyFile(sampleDataPath('v1', 'treatmentGroup'), tgFile);
    await copyFile(sampleDataPath('v1', 'reimbursementGroup'), rgFile);
    importer = await startContext(
      testConfig(infra.get(), {
        REFSYNC_SOURCE_TREATMENT_GROUP: pathToFileURL(tgFile).href,
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: pathToFileURL(rgFile).href,
      }),
    );
    importer.publisher.start(1000);

    observer = await connectNats({
      servers: infra.get().natsUrl,
      name: 'e2e-observer',
      logger: quietLogger(),
    });
    observer.subscribe(SYNC_COMPLETED_SUBJECT, {
      callback: (_err, msg) => {
        const event = syncCompletedEvent.parse(msg.data);
        events.push({ id: event.id, data: event.data });
        const headers = Object.fromEntries(
          [...(msg.headers?.keys() ?? [])].map((k) => [k, msg.headers?.get(k) ?? '']),
        );
        problems.push(...contract.problems({ subject: msg.subject, headers, payload: msg.json() }));
      },
    });
    await observer.flush();

    // refsync-api as it runs in production: its own process, its own connections. Its periodic
    // version check is set to an hour, so within this test only the event can make it notice a commit.
    const port = await freePort();
    apiBase = `http://127.0.0.1:${port}`;
    api = spawn(process.execPath, ['--import', 'tsx', 'apps/refsync-api/src/main.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        MONGO_URL: importer.config.MONGO_URL,
        NATS_URL: infra.get().natsUrl,
        REFSYNC_API_PORT: String(port),
        REFSYNC_API_HOST: '127.0.0.1',
        REFSYNC_API_KEYS: '',
        REFSYNC_VERSION_CHECK_INTERVAL_MS: '3600000',
        TSX_TSCONFIG_PATH: resolve(repoRoot, 'tsconfig.base.json'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    api.stdout?.on('data', (c: Buffer) => (apiOutput += c.toString()));
    api.stderr?.on('data', (c: Buffer) => (apiOutput += c.toString()));
    await eventually(
      async () => {
        if (api.exitCode !== null) throw new Error(`refsync-api exited: ${apiOutput}`);
        return fetch(`${apiBase}/livez`)
          .then((r) => r.ok)
          .catch(() => false);
      },
      'refsync-api to listen',
      30_000,
    );
  }, 60_000);

  afterAll(async () => {
    if (api && api.exitCode === null) {
      const exited = new Promise((done) => api.once('exit', done));
      api.kill('SIGTERM');
      await exited;
    }
    await drainNats(observer);
    await importer?.close();
    await files?.cleanup();
  });

  const get = async (path: string) => {
    const res = await fetch(`${apiBase}${path}`, { headers: { 'X-API-KEY': 'local-dev-key' } });
    expect(res.status).toBe(200);
    return {
      body: (await res.json()) as {
        currentVersion: number;
        items: Array<{ data: { id: string } }>;
      },
    };
  };

  it('when the importer commits the second sample version, then its event makes refsync-api serve it (its periodic check is an hour away)', async () => {
    const first = await importer.importer.run({ trigger: 'cli' });
    expect(first).toMatchObject({ outcome: 'committed', committedVersion: 1 });
    await eventually(
      () => events.some((e) => e.id === 'refsync-sync-completed-1'),
      'the first event',
    );
    await eventually(
      async () => (await get('/api/v1/treatmentGroup')).body.currentVersion === 1,
      'refsync-api at version 1',
    );
    const v1 = (await get('/api/v1/treatmentGroup')).body;
    expect(v1.items).toHaveLength((await readSampleData('v1', 'treatmentGroup')).length);

    // Upstream publishes its next file: replaced in place, as an operator or a transfer job would.
    await copyFile(
      sampleDataPath('v2', 'treatmentGroup'),
      join(files.dir, 'treatment-groups.json'),
    );
    await copyFile(
      sampleDataPath('v2', 'reimbursementGroup'),
      join(files.dir, 'reimbursement-groups.json'),
    );
    const second = await importer.importer.run({ trigger: 'http' });
    expect(second).toMatchObject({ outcome: 'committed', committedVersion: 2 });

    const event = await eventually(
      () => events.find((e) => e.id === 'refsync-sync-completed-2'),
      'the sync-completed event of version 2',
    );
    expect(events.filter((e) => e.id === 'refsync-sync-completed-2')).toHaveLength(1);
    expect(problems).toEqual([]);
    expect(event.data.datasets).toEqual({
      treatmentGroup: {
        added: second.datasets?.treatmentGroup.added,
        updated: second.datasets?.treatmentGroup.changed,
        deleted: second.datasets?.treatmentGroup.deleted,
        total: (await readSampleData('v2', 'treatmentGroup')).length,
      },
      reimbursementGroup: {
        added: second.datasets?.reimbursementGroup.added,
        updated: second.datasets?.reimbursementGroup.changed,
        deleted: second.datasets?.reimbursementGroup.deleted,
        total: (await readSampleData('v2', 'reimbursementGroup')).length,
      },
    });

    // Behaviour, not a stopwatch: refsync-api checks the stored version only once an hour, so
    // serving version 2 within this test can only be the event's doing.
    await eventually(
      async () => (await get('/api/v1/treatmentGroup')).body.currentVersion === 2,
      'refsync-api to serve version 2 after the event',
    );

    const diff = (await get('/api/v1/treatmentGroup?sinceVersion=1')).body;
    const c = second.datasets?.treatmentGroup;
    expect(diff.items).toHaveLength(
      (c?.added ?? 0) + (c?.changed ?? 0) + (c?.deleted ?? 0) + (c?.reappeared ?? 0),
    );
    const v2Ids = (await readSampleData('v2', 'treatmentGroup')).map((i) => i.id).sort();
    expect(
      (await get('/api/v1/treatmentGroup')).body.items
        .map((i: { data: { id: string } }) => i.data.id)
        .sort(),
    ).toEqual(v2Ids);
  }, 60_000);
});
