/**
 * Acknowledged writes survive a crash of the database: the MongoDB-compatible server is killed
 * (SIGKILL) in the middle of a burst of writes and started again on its data file. Every write
 * answered as done is there afterwards, nothing is half-applied, and no event exists for a change
 * the database does not hold.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticFnr } from '@nhp/privacy-testing';
import { DATASETS, REFSYNC_STREAM, type Dataset } from '@nhp/refsync-contracts';
import { createRefsyncReadRepository } from '@nhp/refsync-data-access';
import { readSampleData, syntheticReimbursementGroups, writeItems } from '@nhp/refsync-sample-data';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { waitFor } from '@nhp/shared-testing';
import { call, seededRandom, sleep, startInfrastructure, useCleanup } from './support/fault';
import { startPrivacyStack } from './support/privacy';
import { changesAcked, expectBurstStoredWhole, runSetBurst } from './support/set-burst';
import { DEV_ADMIN_TOKEN, startImporter } from './support/refsync';
import { duplicates, readStream } from './support/stream';

const cleanup = useCleanup();

describe('when the database is killed in the middle of a burst of writes', () => {
  it('then every set privacy-api answered endret is stored whole after the restart, and every event is of a stored change', async () => {
    const infrastructure = await startInfrastructure(cleanup);
    const { mongo, nats, mongoUri } = infrastructure;
    const { app, privacy } = await startPrivacyStack(cleanup, infrastructure);
    const random = seededRandom('privacy-api, database crash');

    // 200 citizens, 4 sets each, 16 clients; the database dies after a random share of answers.
    const CITIZENS = 200;
    const SETS = 4;
    const citizens = Array.from({ length: CITIZENS }, (_, i) => syntheticFnr(50_000 + i));
    const killAfter = Math.round(CITIZENS * SETS * (0.2 + random.next() * 0.4));
    let answered = 0;
    let killed: Promise<unknown> | undefined;
    const burst = await runSetBurst({
      citizens,
      sets: SETS,
      clients: 16,
      clientFor: () => privacy,
      onAcked: () => {
        if (++answered === killAfter) killed = mongo.kill('SIGKILL');
      },
    });
    expect(killed).toBeDefined();
    await killed;
    cleanup.signal.throwIfAborted();
    await mongo.restart();
    await waitFor('privacy-api to serve again', async () => {
      const status = await privacy.status(citizens[0] as string, 2000).catch(() => undefined);
      return status?.status === 200;
    });

    process.stdout.write(
      `privacy-api, database crash: killed after ${killAfter} answers; ${changesAcked(burst)} acknowledged changes, ${burst.unanswered.size} sets unanswered\n`,
    );
    expect(burst.unanswered.size).toBeGreaterThan(0); // the crash did cut the burst
    await expectBurstStoredWhole({
      burst,
      citizens,
      privacy,
      mongoUri,
      natsUrl: nats.url,
      logOf: app,
    });
  });

  it('then a refsync sync cut by the crash leaves readers on a whole version, and the next sync converges with one event per version', async () => {
    const { mongo, nats, mongoUri } = await startInfrastructure(cleanup);
    const random = seededRandom('refsync, database crash');
    const dir = await mkdtemp(join(tmpdir(), 'nhp-faults-upstream-'));
    cleanup.add(dir, (d) => rm(d, { recursive: true, force: true }));
    const files: Record<Dataset, string> = {
      treatmentGroup: join(dir, 'treatment-groups.json'),
      reimbursementGroup: join(dir, 'reimbursement-groups.json'),
    };
    const treatmentGroups = await readSampleData('v1', 'treatmentGroup');
    // Big enough that a run spends a while staging, so the crash can land inside it.
    const snapshots = [0, 0.3, 0.6].map((share) => ({
      treatmentGroup: treatmentGroups,
      reimbursementGroup: syntheticReimbursementGroups(10_000, { seed: 7, changeShare: share }),
    }));
    const publish = async (snapshot: (typeof snapshots)[number]) => {
      await writeItems(files.treatmentGroup, snapshot.treatmentGroup, 'json');
      await writeItems(files.reimbursementGroup, snapshot.reimbursementGroup, 'json');
    };
    await publish(snapshots[0] as (typeof snapshots)[number]);
    const importer = cleanup.add(
      await startImporter({
        mongoUri,
        natsUrl: nats.url,
        upstream: files,
        extra: { LOG_LEVEL: 'info', REFSYNC_LEASE_TTL_MS: '3000' },
      }),
      (i) => i.stop(),
    );
    const auth = { Authorization: `Bearer ${DEV_ADMIN_TOKEN}` };
    const sync = () =>
      call<{ outcome: string; committedVersion?: number | null }>(
        `${importer.url}/sync?wait=true&allowMassDelete=true`,
        { method: 'POST', headers: auth },
        120_000,
      );
    await waitFor('the first sync', async () => (await sync()).status === 200, {
      timeoutMs: 120_000,
      intervalMs: 500,
    });

    const logger = createLogger({ name: 'fault-tests', level: 'silent' });
    const view = async () => {
      const conn = await connectMongo({ uri: mongoUri, logger });
      try {
        const reader = createRefsyncReadRepository(conn);
        const version = await reader.currentVersion();
        const out: Record<string, string> = {};
        for (const dataset of DATASETS) {
          const items = await reader.listItems(dataset, { atVersion: version });
          out[dataset] = JSON.stringify(
            items.map((i) => i.data as { id: string }).sort((a, b) => (a.id < b.id ? -1 : 1)),
          );
        }
        return { version, content: out };
      } finally {
        await closeMongo(conn);
      }
    };
    const contentOf = (snapshot: (typeof snapshots)[number]) =>
      Object.fromEntries(
        DATASETS.map((dataset) => [
          dataset,
          JSON.stringify(
            [...(snapshot[dataset] as Array<{ id: string }>)].sort((a, b) =>
              a.id < b.id ? -1 : 1,
            ),
          ),
        ]),
      );

    let committed = (await view()).version;
    // Round 1 crashes the database while the run stages its change set (a random moment after
    // the diff); round 2 the moment the run logs its commit, which was acknowledged (j: true).
    const rounds = [
      { killAfter: 'change set computed', maxDelayMs: 300 },
      { killAfter: 'version committed', maxDelayMs: 0 },
    ];
    for (const [index, { killAfter, maxDelayMs }] of rounds.entries()) {
      const round = index + 1;
      const before = snapshots[index] as (typeof snapshots)[number];
      const after = snapshots[round] as (typeof snapshots)[number];
      await publish(after);
      const running = sync().catch((err: Error) => ({ status: 0, body: { outcome: err.message } }));
      await importer.waitForLog(
        (l) =>
          l['msg'] === killAfter &&
          (l['previousVersion'] === committed || l['version'] === committed + 1),
      );
      await sleep(Math.round(random.next() * maxDelayMs));
      await mongo.kill('SIGKILL');
      const cut = await running;
      cleanup.signal.throwIfAborted();
      await mongo.restart();

      const state = await view();
      process.stdout.write(
        `refsync, database crash, round ${round}: the run answered ${cut.status} ${cut.body.outcome}; stored version ${state.version}\n`,
      );
      // A commit that was acknowledged is there; readers see one whole snapshot, old or new.
      if (killAfter === 'version committed' || cut.body.outcome === 'committed') {
        expect(state.version).toBe(committed + 1);
      }
      expect([committed, committed + 1]).toContain(state.version);
      expect(state.content).toEqual(contentOf(state.version === committed ? before : after));

      // The next sync converges on the upstream (the lease of the cut run is this process's own).
      const again = await waitFor(
        'a sync after the restart',
        async () => {
          const answer = await sync();
          return answer.status === 200 ? answer.body : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(['committed', 'unchanged']).toContain(again.outcome);
      const converged = await view();
      expect(converged.content).toEqual(contentOf(after));
      expect(converged.version).toBe(committed + 1);
      committed = converged.version;
    }

    // One event per committed version, none of a version the store does not have.
    const events = await waitFor(
      `events of versions 1..${committed}`,
      async () => {
        const found = (await readStream<{ id: string }>(nats.url, REFSYNC_STREAM)).filter(
          (e) => !e.body.id.includes('-unchanged-'),
        );
        return found.length >= committed ? found : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(duplicates(events.map((e) => e.body.id))).toEqual({});
    expect(events.map((e) => e.body.id).sort()).toEqual(
      Array.from({ length: committed }, (_, i) => `refsync-sync-completed-${i + 1}`).sort(),
    );
  });
});
