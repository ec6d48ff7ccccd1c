/**
 * The platform past one machine: two privacy-api instances, refsync-importer and refsync-api, each
 * its own process started from source, on a three-node NATS JetStream cluster (streams of three
 * replicas, NATS_URL naming all three nodes) and the project's MongoDB-compatible server. The node
 * that leads PRIVACY_EVENTS, and REFSYNC_EVENTS (moved to it first), is killed with SIGKILL while
 * citizens' settings change and a sync commits; then it is started again.
 *
 * While the streams elect new leaders, publishes time out and are tried again (privacy's journal
 * sweeper, the importer's outbox): that is expected. What must hold is that every acknowledged
 * change and the sync arrive exactly once, and that both APIs answer throughout.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { MongoClient } from 'mongodb';
import { PRIVACY_EVENTS_STREAM } from '@nhp/privacy-contracts';
import {
  syntheticFnr,
  trustedIssuer,
  type TestIssuer,
  type TrustedIssuer,
} from '@nhp/privacy-testing';
import { REFSYNC_STREAM } from '@nhp/refsync-contracts';
import { sampleDataPath } from '@nhp/refsync-sample-data';
import {
  startMongoServerProcess,
  startNatsCluster,
  withDatabase,
  type MongoServerProcess,
  type NatsCluster,
} from '@nhp/shared-testing';
import { startApp, type AppProcess } from './support/app-process';

const DPOP_BUCKET_STREAM = 'KV_privacy_dpop_jti';
const STREAMS = [PRIVACY_EVENTS_STREAM, REFSYNC_STREAM, DPOP_BUCKET_STREAM];
const SET_PATH = '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2';
const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
const RESERVASJON_TEMPLATE = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02';
const RELAY_FAILED = 'journal relay failed';
const PUBLISH_TIMEOUT = 'NATS did not acknowledge the event in time (publish timeout';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value; the limit only ends a hung test. */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  limitMs = 60_000,
): Promise<T> {
  const end = Date.now() + limitMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(`gave up waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await sleep(200);
  }
}

interface StoredMessage {
  seq: number;
  subject: string;
  msgId: string;
  event: { id: string; data: Record<string, unknown> };
}

let cluster: NatsCluster;
let mongo: MongoServerProcess;
let mongoUrl: string;
let trusted: TrustedIssuer | undefined;
let issuer: TestIssuer;
let dir: string;
let upstream: { treatmentGroup: string; reimbursementGroup: string };
const apps: AppProcess[] = [];
let privacyA: AppProcess;
let privacyB: AppProcess;
let importer: AppProcess;
let refsyncApi: AppProcess;

beforeAll(async () => {
  cluster = await startNatsCluster({ nodes: 3 });
  mongo = await startMongoServerProcess();
  mongoUrl = withDatabase(mongo.uri, 'cluster_test');
  trusted = await trustedIssuer();
  issuer = trusted.issuer;
  const trustedEnv = trusted.env;
  dir = await mkdtemp(join(tmpdir(), 'nhp-cluster-test-'));
  upstream = {
    treatmentGroup: join(dir, 'treatment-groups.json'),
    reimbursementGroup: join(dir, 'reimbursement-groups.json'),
  };
  await copyFile(sampleDataPath('v1', 'treatmentGroup'), upstream.treatmentGroup);
  await copyFile(sampleDataPath('v1', 'reimbursementGroup'), upstream.reimbursementGroup);

  const shared = {
    MONGO_URL: mongoUrl,
    NATS_URL: cluster.url,
    NATS_STREAM_REPLICAS: '3',
    LOG_LEVEL: 'warn',
  };
  const privacy = (name: string) =>
    startApp({
      name,
      entry: 'apps/privacy-api/src/main.ts',
      portVariable: 'PRIVACY_API_PORT',
      hostVariable: 'PRIVACY_API_HOST',
      env: {
        ...shared,
        ...trustedEnv,
        PRIVACY_DPOP_REPLAY_STORE: 'nats',
      },
      count: [RELAY_FAILED, PUBLISH_TIMEOUT],
    });
  // The first instance alone: it builds the indexes and privacy's built-in data.
  privacyA = await privacy('privacy-api A');
  apps.push(privacyA);
  expect(await privacyA.healthy()).toBe(true);
  [privacyB, importer, refsyncApi] = await Promise.all([
    privacy('privacy-api B'),
    startApp({
      name: 'refsync-importer',
      entry: 'apps/refsync-importer/src/main.ts',
      portVariable: 'REFSYNC_IMPORTER_PORT',
      hostVariable: 'REFSYNC_IMPORTER_HOST',
      env: {
        ...shared,
        REFSYNC_SOURCE_TREATMENT_GROUP: pathToFileURL(upstream.treatmentGroup).href,
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: pathToFileURL(upstream.reimbursementGroup).href,
        REFSYNC_PUBLISH_INTERVAL_MS: '1000',
      },
    }),
    startApp({
      name: 'refsync-api',
      entry: 'apps/refsync-api/src/main.ts',
      portVariable: 'REFSYNC_API_PORT',
      hostVariable: 'REFSYNC_API_HOST',
      env: { ...shared, REFSYNC_API_KEYS: '', REFSYNC_VERSION_CHECK_INTERVAL_MS: '2000' },
    }),
  ]);
  apps.push(privacyB, importer, refsyncApi);
  for (const app of [privacyB, importer, refsyncApi]) {
    if (!(await app.healthy())) throw new Error(`${app.name} did not start:\n${app.output()}`);
  }
}, 150_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await cluster?.dispose();
  await mongo?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
  await trusted?.dispose();
}, 60_000);

/** Every message of `stream` as stored now, read one by one by sequence. */
async function readStream(stream: string): Promise<StoredMessage[]> {
  const jsm = await cluster.jsm();
  const { state } = await jsm.streams.info(stream);
  const seqs: number[] = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
    seqs.push(seq);
  }
  const out: StoredMessage[] = [];
  for (let i = 0; i < seqs.length; i += 50) {
    const batch = await Promise.all(
      seqs.slice(i, i + 50).map((seq) => jsm.streams.getMessage(stream, { seq })),
    );
    for (const msg of batch) {
      if (!msg) continue;
      out.push({
        seq: msg.seq,
        subject: msg.subject,
        msgId: msg.header.get('Nats-Msg-Id'),
        event: msg.json(),
      });
    }
  }
  return out;
}

/** How many times each value occurs. */
function tally(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

/** A POST to `app` with the given Host header (fetch sets its own). */
function postWithHost(
  app: AppProcess,
  host: string,
  options: { authorization: string; dpop: string; body: string },
): Promise<{ status: number; body: { code?: string } }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: app.port,
        path: STATUS_PATH,
        method: 'POST',
        headers: {
          host,
          authorization: options.authorization,
          dpop: options.dpop,
          'content-type': 'application/json',
        },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: { code?: string } = {};
          try {
            body = JSON.parse(text) as { code?: string };
          } catch {
            // not JSON: status only
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

interface Failure {
  what: string;
  status: number | string;
  at: number;
}

/** Requests every 250 ms that must answer 200 throughout: probes and real reads of both APIs. */
function keepProbing(checks: Array<{ what: string; run: () => Promise<Response> }>) {
  const failures: Failure[] = [];
  let answered = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await Promise.all(
        checks.map(async ({ what, run }) => {
          try {
            const res = await run();
            await res.arrayBuffer();
            if (res.status === 200) answered += 1;
            else failures.push({ what, status: res.status, at: Date.now() });
          } catch (err) {
            failures.push({ what, status: (err as Error).message, at: Date.now() });
          }
        }),
      );
      await sleep(250);
    }
  })();
  return {
    failures,
    answered: () => answered,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

describe('a three-node NATS cluster losing the node that leads the event streams', () => {
  it('when that node is killed while settings change and a sync commits, then every acknowledged change and the sync arrive exactly once, both APIs serve throughout, and the restarted node converges', async () => {
    const jsm = await cluster.jsm();
    // Created by the apps at start, with NATS_STREAM_REPLICAS=3.
    for (const stream of STREAMS) {
      await eventually(`${stream} to be led`, () => cluster.streamLeader(stream), 30_000);
      expect((await jsm.streams.info(stream)).config.num_replicas).toBe(3);
    }
    // The importer synchronised version 1 at start and announced it.
    await eventually('the sync-completed event of version 1', async () =>
      (await readStream(REFSYNC_STREAM)).some((m) => m.msgId === 'refsync-sync-completed-1'),
    );

    const admin = `Bearer ${await issuer.mint({ scopes: ['read', 'write', 'admin'] })}`;
    const post = (app: AppProcess, path: string, body: unknown, auth = admin) =>
      fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    const partKode = `HA${Date.now().toString(36).toUpperCase()}`;
    const definisjonGuid = randomUUID();
    expect((await post(privacyA, '/part/v1', { partKode, navn: 'Cluster' })).status).toBe(201);
    const created = await post(privacyA, '/innstillingdefinisjon/v1', {
      definisjonMalGuid: RESERVASJON_TEMPLATE,
      definisjonGuid,
      partKode,
      navn: 'Reservasjon (cluster test)',
      replikering: true,
    });
    expect(created.status).toBe(201);
    const probeFnr = syntheticFnr(90_000);
    const statusBody = { innbyggerFnr: probeFnr, definisjonGuid, partKode };

    // Both event streams and the DPoP replay bucket lose their leader at once.
    const victim = await cluster.waitForStreamLeader(PRIVACY_EVENTS_STREAM);
    await cluster.moveStreamLeader(REFSYNC_STREAM, victim);
    await cluster.moveStreamLeader(DPOP_BUCKET_STREAM, victim);

    const apiKey = { 'X-API-KEY': 'local-dev-key' };
    const get = (url: string, headers: Record<string, string> = {}) =>
      fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
    const probes = keepProbing([
      ...[privacyA, privacyB].flatMap((app) => [
        { what: `${app.name} /health`, run: () => get(`${app.url}/health`) },
        { what: `${app.name} status check`, run: () => post(app, STATUS_PATH, statusBody) },
      ]),
      { what: 'refsync-api /health', run: () => get(`${refsyncApi.url}/health`) },
      {
        what: 'refsync-api treatment groups',
        run: () => get(`${refsyncApi.url}/api/v1/treatmentGroup`, apiKey),
      },
      { what: 'refsync-importer /health', run: () => get(`${importer.url}/health`) },
    ]);

    // Writers: each changes its citizens' setting back and forth on both instances.
    const endret = new Map<string, number>();
    const acknowledgedAt: number[] = [];
    const setFailures: Failure[] = [];
    let writing = true;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      const citizens = Array.from({ length: 5 }, (_, k) => syntheticFnr(91_000 + w * 10 + k));
      const aktiv = new Map<string, boolean>();
      for (let i = 0; writing; i++) {
        const fnr = citizens[i % citizens.length] as string;
        const next = !(aktiv.get(fnr) ?? false);
        const app = i % 2 === 0 ? privacyA : privacyB;
        try {
          const res = await post(app, SET_PATH, {
            innbyggerFnr: fnr,
            definisjonGuid,
            partKode,
            typePi: 'reservasjon',
            aktiv: next,
          });
          const body = (await res.json()) as { instansEndret?: string };
          if (res.status !== 200) {
            setFailures.push({ what: `${app.name} set`, status: res.status, at: Date.now() });
          } else if (body.instansEndret === 'endret') {
            aktiv.set(fnr, next);
            endret.set(fnr, (endret.get(fnr) ?? 0) + 1);
            acknowledgedAt.push(Date.now());
          }
        } catch (err) {
          setFailures.push({
            what: `${app.name} set`,
            status: (err as Error).message,
            at: Date.now(),
          });
        }
        await sleep(50);
      }
    });

    // DPoP-bound requests: their proofs are checked against the replay bucket in the cluster.
    const dpopAnswers: Array<{ status: number; code?: string }> = [];
    /** A DPoP-bound token and one proof for a status check at `app`'s URL, and how to send it. */
    const dpop = async (app: AppProcess) => {
      const key = await issuer.newDpopKey();
      const token = await issuer.mint({ scopes: ['read', 'admin'], dpopKey: key });
      const url = `${app.url}${STATUS_PATH}`;
      const proof = await issuer.dpopProof({ key, method: 'POST', url, accessToken: token });
      // To any instance with the Host the client addressed, as a load balancer forwards it.
      const send = (to: AppProcess) =>
        postWithHost(to, new URL(url).host, {
          authorization: `DPoP ${token}`,
          dpop: proof,
          body: JSON.stringify(statusBody),
        });
      return { send };
    };
    let dpopRunning = true;
    const dpopLoop = (async () => {
      for (let i = 0; dpopRunning; i++) {
        const app = i % 2 === 0 ? privacyA : privacyB;
        try {
          const answer = await (await dpop(app)).send(app);
          dpopAnswers.push({ status: answer.status, code: answer.body.code });
        } catch (err) {
          dpopAnswers.push({ status: 0, code: (err as Error).message });
        }
        await sleep(300);
      }
    })();

    await sleep(2000);
    const beforeKill = {
      relayFailures: privacyA.linesWith(RELAY_FAILED) + privacyB.linesWith(RELAY_FAILED),
    };
    // The next sample version upstream, and a sync started just before the crash.
    await copyFile(sampleDataPath('v2', 'treatmentGroup'), upstream.treatmentGroup);
    await copyFile(sampleDataPath('v2', 'reimbursementGroup'), upstream.reimbursementGroup);
    const sync = await fetch(`${importer.url}/sync`, {
      method: 'POST',
      headers: { authorization: 'Bearer local-admin-token' },
    });
    expect(sync.status).toBe(202);
    const { runId } = (await sync.json()) as { runId: string };

    const killedAt = Date.now();
    await victim.kill('SIGKILL');
    const [privacyLeader, refsyncLeader, bucketLeader] = await Promise.all(
      STREAMS.map((stream) =>
        cluster.waitForStreamLeader(stream, { not: victim, timeoutMs: 60_000 }),
      ),
    );
    const electedAt = Date.now();
    // Writes went on while the stream had no leader: the database, not NATS, acknowledges them.
    expect(acknowledgedAt.some((t) => t > killedAt && t < electedAt)).toBe(true);
    await sleep(3000);
    writing = false;
    await Promise.all(writers);

    // The sync committed version 2 while its stream was failing over.
    const run = await eventually('the sync run to finish', async () => {
      const res = await fetch(`${importer.url}/sync/${runId}`, {
        headers: { authorization: 'Bearer local-admin-token' },
      });
      const body = (await res.json()) as { outcome?: string; committedVersion?: number };
      return body.outcome && body.outcome !== 'running' ? body : undefined;
    });
    expect(run).toMatchObject({ outcome: 'committed', committedVersion: 2 });

    await victim.restart();
    await cluster.waitForConverged(STREAMS, 60_000);

    // Every event is in: the journal and the outbox have nothing left to publish.
    const client = await new MongoClient(mongoUrl).connect();
    try {
      await eventually('privacy-api journal to be relayed', async () => {
        const pending = await client.db().collection('privacy_journal_pending').countDocuments();
        return pending === 0;
      });
    } finally {
      await client.close();
    }
    await eventually('the sync-completed event of version 2', async () =>
      (await readStream(REFSYNC_STREAM)).some((m) => m.msgId === 'refsync-sync-completed-2'),
    );
    await eventually('refsync-api to serve version 2', async () => {
      const res = await get(`${refsyncApi.url}/api/v1/treatmentGroup`, apiKey);
      return ((await res.json()) as { currentVersion?: number }).currentVersion === 2;
    });

    dpopRunning = false;
    await dpopLoop;
    await probes.stop();

    // PRIVACY_EVENTS: each acknowledged change exactly once, by event id and by (fnr, sekvensnummer).
    const privacyEvents = await readStream(PRIVACY_EVENTS_STREAM);
    const byMsgId = tally(privacyEvents.map((m) => m.msgId));
    expect([...byMsgId.values()].filter((n) => n > 1)).toEqual([]);
    expect(privacyEvents.every((m) => m.event.id === m.msgId)).toBe(true);
    const ours = privacyEvents.filter(
      (m) => m.subject === `privacy.events.setting-changed.${partKode}`,
    );
    const acknowledged = [...endret.values()].reduce((a, b) => a + b, 0);
    expect(ours).toHaveLength(acknowledged);
    const bySetting = new Map<string, number[]>();
    for (const m of ours) {
      const fnr = m.event.data['innbyggerFnr'] as string;
      bySetting.set(fnr, [...(bySetting.get(fnr) ?? []), m.event.data['sekvensnummer'] as number]);
    }
    expect(new Set(bySetting.keys())).toEqual(new Set(endret.keys()));
    for (const [fnr, n] of endret) {
      const numbers = (bySetting.get(fnr) ?? []).sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    }

    // REFSYNC_EVENTS: the sync's event exactly once (and version 1's, from before the crash).
    const refsyncIds = tally((await readStream(REFSYNC_STREAM)).map((m) => m.msgId));
    expect(refsyncIds.get('refsync-sync-completed-1')).toBe(1);
    expect(refsyncIds.get('refsync-sync-completed-2')).toBe(1);
    expect([...refsyncIds.values()].filter((n) => n > 1)).toEqual([]);

    // Both APIs answered every request, throughout.
    expect(setFailures).toEqual([]);
    expect(probes.failures).toEqual([]);
    expect(probes.answered()).toBeGreaterThan(0);
    // A DPoP request is checked against the bucket or refused as an outage, never anything else.
    expect(
      dpopAnswers.filter(
        (a) => !(a.status === 200 || (a.status === 500 && a.code === 'EPVK-100503')),
      ),
    ).toEqual([]);

    // Three replicas each, every one current again (waitForConverged), and the replay store works
    // across instances: a proof accepted by A is refused by B.
    for (const stream of STREAMS) {
      const info = await jsm.streams.info(stream);
      expect(info.config.num_replicas).toBe(3);
      expect(info.cluster?.replicas?.map((r) => r.current)).toEqual([true, true]);
    }
    const fresh = await dpop(privacyA);
    expect((await fresh.send(privacyA)).status).toBe(200);
    expect((await fresh.send(privacyB)).status).toBe(401);

    const relayFailures =
      privacyA.linesWith(RELAY_FAILED) +
      privacyB.linesWith(RELAY_FAILED) -
      beforeKill.relayFailures;
    const timeouts = privacyA.linesWith(PUBLISH_TIMEOUT) + privacyB.linesWith(PUBLISH_TIMEOUT);
    const timeoutLine = [privacyA, privacyB]
      .flatMap((app) => app.output().split('\n'))
      .find((line) => line.includes(PUBLISH_TIMEOUT));
    const logged = timeoutLine
      ? (JSON.parse(timeoutLine) as { msg?: string; err?: { message?: string } })
      : undefined;
    console.info(
      [
        `killed ${victim.name} (leader of ${STREAMS.join(', ')});`,
        `new leaders ${[privacyLeader, refsyncLeader, bucketLeader].map((n) => n?.name).join(' / ')} after ${electedAt - killedAt} ms;`,
        `${acknowledged} changes acknowledged (endret) and ${ours.length} events stored;`,
        `journal relay failures logged: ${relayFailures} (publish timeouts: ${timeouts});`,
        `probe answers: ${probes.answered()};`,
        `e.g. "${logged?.msg}: ${logged?.err?.message}";`,
        `DPoP answers by status: ${JSON.stringify(Object.fromEntries(tally(dpopAnswers.map((a) => String(a.status)))))}`,
      ].join(' '),
    );
  });
});
