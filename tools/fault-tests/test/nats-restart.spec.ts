/**
 * A nats-server (JetStream, file store) stopped and started again on the same port and store 20
 * times, alternating a clean stop and a crash, while the apps are under load: they keep serving
 * and stay ready throughout (NATS is not critical for readiness), and every event of a change made
 * while NATS was down reaches its stream once NATS is back, exactly once per change.
 */
import { PRIVACY_EVENTS_STREAM, settingChangedSubject } from '@nhp/privacy-contracts';
import { syntheticFnr } from '@nhp/privacy-testing';
import { REFSYNC_STREAM, syncCompletedEventId } from '@nhp/refsync-contracts';
import { waitFor } from '@nhp/shared-testing';
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
} from './support/fault';
import { startPrivacyStack } from './support/privacy';
import {
  DEV_ADMIN_TOKEN,
  DEV_API_KEY,
  startImporter,
  startRefsyncApi,
  upstreamFiles,
} from './support/refsync';
import { duplicates, readStream } from './support/stream';

const CYCLES = 20;
/** Not a requirement: only how long a cycle may take before the test calls it stuck. */
const BACK_WITHIN_MS = 20_000;

const cleanup = useCleanup();

interface SettingChanged {
  id: string;
  data: { innbyggerFnr: string; definisjonGuid: string; sekvensnummer: number; aktiv: boolean };
}

describe('when NATS is stopped and started again 20 times under load', () => {
  it('then privacy-api keeps serving and stays healthy, and each change made meanwhile is published exactly once', async () => {
    const infrastructure = await startInfrastructure(cleanup);
    const { nats } = infrastructure;
    const { app, privacy } = await startPrivacyStack(cleanup, infrastructure);
    const random = seededRandom('privacy-api, NATS restarts');

    // Four clients with five citizens each, setting (flipping aktiv) and checking in turn; a fifth
    // client asks for /health. `endret` answers are counted per citizen: one event each.
    const citizens = (client: number) =>
      Array.from({ length: 5 }, (_, k) => syntheticFnr(30_000 + client * 10 + k));
    const changes = new Map<string, number>();
    const aktiv = new Map<string, boolean>();
    let natsDown = false;
    let changesWhileDown = 0;
    const load = startLoad(5, async (client, n) => {
      if (client === 4) {
        expectStatus(await call(`${app.url}/health`), 200, '/health');
        return;
      }
      const fnr = citizens(client)[Math.floor(n / 2) % 5] as string;
      if (n % 2 === 1) {
        expectStatus(await privacy.status(fnr), 200, 'status');
        return;
      }
      const next = !(aktiv.get(fnr) ?? false);
      const down = natsDown;
      const answer = expectStatus(await privacy.set(fnr, next), 200, 'set');
      aktiv.set(fnr, next);
      if (answer.body.instansEndret === 'endret') {
        changes.set(fnr, (changes.get(fnr) ?? 0) + 1);
        if (down && natsDown) changesWhileDown++;
      }
    });
    cleanup.add(load, (l) => l.stop());

    const cycles = await restartCycles({
      cycles: CYCLES,
      signal: cleanup.signal,
      random,
      deadlineMs: BACK_WITHIN_MS,
      maxPauseMs: 1000,
      stop: async (signal) => {
        await nats.kill(signal);
        natsDown = true;
      },
      start: async () => {
        natsDown = false;
        await nats.restart();
      },
      serving: () => answers(`${app.url}/health`, 200),
    });
    const stats = await load.stop();
    printCycles('privacy-api, NATS restarts', cycles, stats);

    expect(unrecovered(cycles, BACK_WITHIN_MS)).toEqual([]);
    expect(cycles).toHaveLength(CYCLES);
    expect(stats.failures).toEqual([]);
    expect(app.running).toBe(true);
    expect(changesWhileDown).toBeGreaterThan(0);

    // Every change's event arrives once NATS is back (the journal's sweeper retries every 5 s).
    const expected = [...changes.values()].reduce((a, b) => a + b, 0);
    const mine = async () =>
      (await readStream<SettingChanged>(nats.url, PRIVACY_EVENTS_STREAM)).filter(
        (m) => m.subject === settingChangedSubject(privacy.partKode),
      );
    const events = await waitFor(
      `${expected} events in ${PRIVACY_EVENTS_STREAM}`,
      async () => {
        const found = await mine();
        return found.length >= expected ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    ).catch(async (err: Error) => {
      throw new Error(`${err.message} (found ${(await mine()).length})\n${lastLines(app)}`);
    });

    expect(events).toHaveLength(expected);
    expect(duplicates(events.map((e) => e.body.id))).toEqual({});
    for (const e of events) {
      expect(e.msgId).toBe(e.body.id);
      expect(e.body.data.definisjonGuid).toBe(privacy.definisjonGuid);
    }
    // Per citizen: sekvensnummer 1..n, each once, n being the citizen's changes and what the
    // API answers now.
    for (const [fnr, n] of changes) {
      const numbers = events
        .filter((e) => e.body.data.innbyggerFnr === fnr)
        .map((e) => e.body.data.sekvensnummer)
        .sort((a, b) => a - b);
      expect({ fnr, numbers }).toEqual({
        fnr,
        numbers: Array.from({ length: n }, (_, i) => i + 1),
      });
      const status = expectStatus(await privacy.status(fnr), 200, 'status');
      expect({ fnr, sekvensnummer: status.body.sekvensnummer }).toEqual({ fnr, sekvensnummer: n });
    }
  });

  it('then refsync keeps serving and stays ready, and each sync committed meanwhile is published once and makes every refsync-api serve its version', async () => {
    const { nats, mongoUri } = await startInfrastructure(cleanup);
    const upstream = cleanup.add(await upstreamFiles('v1'), (u) => u.dispose());
    const importer = cleanup.add(
      await startImporter({ mongoUri, natsUrl: nats.url, upstream }),
      (i) => i.stop(),
    );
    const auth = { Authorization: `Bearer ${DEV_ADMIN_TOKEN}` };
    const sync = () =>
      call<{ outcome: string; committedVersion?: number }>(
        `${importer.url}/sync?wait=true&allowMassDelete=true`,
        { method: 'POST', headers: auth },
        60_000,
      );
    // The worker's own first run (no version yet) commits version 1; 409 until it has finished.
    await waitFor('the first sync', async () => (await sync()).status === 200, {
      timeoutMs: 60_000,
    });
    // Two replicas. Their periodic version check is an hour away: only the event tells them.
    const apis = [
      cleanup.add(
        await startRefsyncApi({ mongoUri, natsUrl: nats.url, versionCheckIntervalMs: 3_600_000 }),
        (a) => a.stop(),
      ),
      cleanup.add(
        await startRefsyncApi({ mongoUri, natsUrl: nats.url, versionCheckIntervalMs: 3_600_000 }),
        (a) => a.stop(),
      ),
    ];
    const headers = { 'X-API-KEY': DEV_API_KEY };
    const served = async (api: (typeof apis)[number]) =>
      expectStatus(
        await call<{ currentVersion: number }>(`${api.url}/api/v1/treatmentGroup`, { headers }),
        200,
        `${api.name} list`,
      ).body.currentVersion;
    expect(await Promise.all(apis.map(served))).toEqual([1, 1]);
    const random = seededRandom('refsync, NATS restarts');

    // Per replica a client reading the list and one asking for readiness; one for the importer.
    const load = startLoad(5, async (client) => {
      if (client === 4) {
        expectStatus(await call(`${importer.url}/readyz`), 200, 'importer /readyz');
        return;
      }
      const api = apis[client % 2] as (typeof apis)[number];
      if (client < 2) await served(api);
      else expectStatus(await call(`${api.url}/readyz`), 200, `${api.name} /readyz`);
    });
    cleanup.add(load, (l) => l.stop());

    // While NATS is down, upstream publishes its other sample version and a sync commits it.
    let version = 1;
    const cycles = await restartCycles({
      cycles: CYCLES,
      signal: cleanup.signal,
      random,
      deadlineMs: BACK_WITHIN_MS,
      stop: (signal) => nats.kill(signal),
      whileDown: async (cycle) => {
        await upstream.publish(cycle % 2 === 1 ? 'v2' : 'v1');
        const answer = expectStatus(await sync(), 200, 'POST /sync while NATS is down');
        expect(answer.body).toMatchObject({ outcome: 'committed', committedVersion: version + 1 });
        version++;
      },
      start: () => nats.restart(),
      serving: async () => {
        const versions = await Promise.all(apis.map((api) => served(api).catch(() => -1)));
        return versions.every((v) => v === version);
      },
    });
    const stats = await load.stop();
    printCycles('refsync, NATS restarts', cycles, stats);
    if (unrecovered(cycles, BACK_WITHIN_MS).length > 0) {
      process.stdout.write(`${apis.map(lastLines).join('\n')}\n${lastLines(importer)}\n`);
    }

    expect(unrecovered(cycles, BACK_WITHIN_MS)).toEqual([]);
    expect(cycles).toHaveLength(CYCLES);
    expect(stats.failures).toEqual([]);
    expect(version).toBe(CYCLES + 1);

    // One event per committed version, no more. The APIs may serve the last version before its
    // event is in the stream (they also poll), and the importer's outbox publishes it once its
    // connection is back: the stream is read again until it holds every version or a while passed.
    const readEvents = async () =>
      (await readStream<{ id: string }>(nats.url, REFSYNC_STREAM)).filter(
        (e) => !e.body.id.includes('-unchanged-'),
      );
    let events = await readEvents();
    for (let i = 0; i < 100 && new Set(events.map((e) => e.body.id)).size < version; i++) {
      await new Promise((r) => setTimeout(r, 200));
      events = await readEvents();
    }
    expect(duplicates(events.map((e) => e.body.id))).toEqual({});
    expect(events.map((e) => e.body.id).sort()).toEqual(
      Array.from({ length: version }, (_, i) => syncCompletedEventId(i + 1)).sort(),
    );
    for (const e of events) expect(e.msgId).toBe(e.body.id);
  });
});
