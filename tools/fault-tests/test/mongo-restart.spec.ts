/**
 * Each app under steady load while its MongoDB (the project's server, in its own process, with a
 * data file) is stopped and started again on the same port and data file 20 times, alternating a
 * clean stop and a crash: after every start the app serves again within 5 s, without a restart of
 * the app. Before the driver patch (patches/README.md) some cycles never recovered.
 */
import { syntheticFnr } from '@nhp/privacy-testing';
import { waitFor, type AppProcess, type MongoServerProcess } from '@nhp/shared-testing';
import {
  answers,
  call,
  expectStatus,
  lastLines,
  printCycles,
  restartCycles,
  seededRandom,
  startInfrastructure,
  startLoad,
  unrecovered,
  useCleanup,
  type Load,
} from './support/fault';
import { startPrivacyStack } from './support/privacy';
import {
  DEV_ADMIN_TOKEN,
  DEV_API_KEY,
  seedVersions,
  startImporter,
  startRefsyncApi,
  upstreamFiles,
} from './support/refsync';

const CYCLES = 20;
const DEADLINE_MS = 5000;

const cleanup = useCleanup();

/**
 * Stops the database (a clean stop and a crash in turn) and starts it again CYCLES times while
 * `load` runs, then expects `app`, the same process throughout, to have served again (`serving`)
 * within DEADLINE_MS of every start, and the load to have been served at all.
 */
async function expectServingAfterEveryRestart(options: {
  label: string;
  mongo: MongoServerProcess;
  app: AppProcess;
  load: Load;
  serving: () => Promise<boolean>;
  afterRecovery?: (cycle: number) => Promise<void>;
}): Promise<void> {
  const { label, mongo, app } = options;
  const pid = app.child.pid;
  const cycles = await restartCycles({
    cycles: CYCLES,
    signal: cleanup.signal,
    random: seededRandom(label),
    deadlineMs: DEADLINE_MS,
    stop: (signal) => mongo.kill(signal),
    start: () => mongo.restart(),
    serving: options.serving,
    afterRecovery: options.afterRecovery,
  });
  const stats = await options.load.stop();
  printCycles(label, cycles, stats);
  if (unrecovered(cycles, DEADLINE_MS).length > 0) process.stdout.write(lastLines(app) + '\n');

  expect(unrecovered(cycles, DEADLINE_MS)).toEqual([]);
  expect(cycles).toHaveLength(CYCLES);
  expect(app.running).toBe(true);
  expect(app.child.pid).toBe(pid);
  expect(stats.ok).toBeGreaterThan(0);
}

describe('when MongoDB is stopped and started again 20 times under load', () => {
  it('then privacy-api serves status checks and sets again within 5 s of every start', async () => {
    const infrastructure = await startInfrastructure(cleanup);
    const { mongo } = infrastructure;
    const { app, privacy } = await startPrivacyStack(cleanup, infrastructure);

    // Eight clients, each with its own citizens: a set, then a status check, and so on (with four,
    // the unpatched driver got stuck in one run of three; with eight, in five of six).
    const load = startLoad(8, async (client, n) => {
      const fnr = syntheticFnr(10_000 + client * 100 + (n % 10));
      if (n % 2 === 0) expectStatus(await privacy.set(fnr, n % 4 === 0), 200, 'set');
      else expectStatus(await privacy.status(fnr), 200, 'status');
    });
    cleanup.add(load, (l) => l.stop());

    const probeFnr = syntheticFnr(20_000);
    let aktiv = false;
    await expectServingAfterEveryRestart({
      label: 'privacy-api, MongoDB restarts',
      mongo,
      app,
      load,
      serving: async () => {
        aktiv = !aktiv;
        const set = await privacy.set(probeFnr, aktiv, 2000).catch(() => undefined);
        if (set?.status !== 200) return false;
        const status = await privacy.status(probeFnr, 2000).catch(() => undefined);
        if (status?.status !== 200 || status.body.aktiv !== aktiv) return false;
        return answers(`${app.url}/health`, 200);
      },
    });
  });

  it('then refsync-api serves lists read from the database again within 5 s of every start', async () => {
    const { mongo, nats } = await startInfrastructure(cleanup);
    const mongoUri = `${mongo.uri}/faults`;
    // More than 31 versions: a sinceVersion this far back is computed from the database on every
    // request (never cached), so it is a read that needs MongoDB.
    const version = await seedVersions(mongoUri, 35);
    const api = cleanup.add(await startRefsyncApi({ mongoUri, natsUrl: nats.url }), (a) =>
      a.stop(),
    );
    const headers = { 'X-API-KEY': DEV_API_KEY };

    const load = startLoad(4, async (client, n) => {
      const since = 1 + ((client + n) % 3); // 1-3: never cached
      const path =
        client % 2 === 0
          ? `/api/v1/treatmentGroup?sinceVersion=${since}`
          : `/api/v1/treatment-group?since-version=${since}`;
      const encoding = ['identity', 'gzip', 'br'][n % 3] as string;
      const answer = await call(`${api.url}${path}`, {
        headers: { ...headers, 'Accept-Encoding': encoding },
      });
      expectStatus(answer, 200, path);
    });
    cleanup.add(load, (l) => l.stop());

    await expectServingAfterEveryRestart({
      label: 'refsync-api, MongoDB restarts',
      mongo,
      app: api,
      load,
      // Both at once, as a load balancer polls readiness while clients read.
      serving: async () => {
        const [ready, list] = await Promise.all([
          answers(`${api.url}/readyz`, 200),
          call<{ currentVersion: number }>(
            `${api.url}/api/v1/reimbursementGroup?sinceVersion=1`,
            { headers },
            2000,
          ).catch(() => undefined),
        ]);
        return ready && list?.status === 200 && list.body.currentVersion === version;
      },
    });
  });

  it('then refsync-importer is ready, reads its runs and syncs again within 5 s of every start', async () => {
    const { mongo, nats } = await startInfrastructure(cleanup);
    const upstream = cleanup.add(await upstreamFiles('v1'), (u) => u.dispose());
    const importer = cleanup.add(
      await startImporter({ mongoUri: `${mongo.uri}/faults`, natsUrl: nats.url, upstream }),
      (i) => i.stop(),
    );
    const auth = { Authorization: `Bearer ${DEV_ADMIN_TOKEN}` };
    // The worker syncs once at start (no version yet): 409 until that run has finished.
    const first = await waitFor('a first sync', async () => {
      const answer = await call<{ runId: string; outcome: string }>(
        `${importer.url}/sync?wait=true`,
        { method: 'POST', headers: auth },
        30_000,
      );
      return answer.status === 200 ? answer.body : undefined;
    });

    // One client syncing (the upstream does not change: each run reads, diffs and records
    // itself; a run cut by the outage answers 200 with outcome failed), two asking for readiness.
    let syncsDone = 0;
    const load = startLoad(3, async (client) => {
      if (client === 0) {
        const answer = await call<{ outcome: string }>(
          `${importer.url}/sync?wait=true`,
          { method: 'POST', headers: auth },
          30_000,
        );
        expectStatus(answer, 200, 'POST /sync');
        if (answer.body.outcome !== 'unchanged') throw new Error(`sync ${answer.body.outcome}`);
        syncsDone++;
      } else {
        expectStatus(await call(`${importer.url}/readyz`), 200, '/readyz');
      }
    });
    cleanup.add(load, (l) => l.stop());

    await expectServingAfterEveryRestart({
      label: 'refsync-importer, MongoDB restarts',
      mongo,
      app: importer,
      load,
      serving: async () => {
        const ready = await call<{ checks?: Record<string, boolean> }>(
          `${importer.url}/readyz`,
          {},
          2000,
        ).catch(() => undefined);
        if (ready?.status !== 200 || ready.body.checks?.['mongodb'] !== true) return false;
        return answers(`${importer.url}/sync/${first.runId}`, 200, { headers: auth });
      },
      // And a whole run (lease, upstream, diff, run record) succeeds again before the next stop.
      afterRecovery: async (cycle) => {
        const before = syncsDone;
        await waitFor(`a sync to succeed after start ${cycle}`, () => syncsDone > before);
      },
    });
  });
});
