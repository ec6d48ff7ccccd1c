/**
 * Soak of the project's MongoDB-compatible server under the whole system (issue 36):
 *
 *   npm run bench -- soak                       (20 minutes of load, then 1 minute idle)
 *   SOAK_MINUTES=4 SOAK_IDLE_S=30 npm run bench -- soak     (a shorter run while developing)
 *
 * The server runs as `npm run mongo-server` runs it (the CLI's bundle, a data file, journaled
 * writes), with privacy-api, refsync-api and refsync-importer as processes on it (as `npm run
 * <app>` runs them) and a nats-server. The load, open loop at fixed rates: about 100 privacy-api
 * requests a second (half sets of a citizen's setting, half status checks), about 100 refsync-api
 * list requests a second (deltas since one to three versions back, both datasets), and every 2
 * minutes a sync by the importer of an upstream in which 1% of the items changed. Every answer
 * is checked (status, and the fields that say it is the right one).
 *
 * Every 5 s the server's RSS, CPU time and data folder (snapshot and journal) are sampled. For
 * the first and the last 5 minutes it prints the server's RSS, CPU, data and journal sizes and
 * each API's p50/p99, then checks the targets:
 * - the server's RSS stays within 3 × its data folder + 150 MiB at every sample, and after the
 *   idle minute;
 * - each API's p99 of the last window is within 1.5 × the first window's;
 * - after a SIGKILL the server answers a ping within 1 s per 100 MiB of data folder (at least
 *   1 s), and a clean stop leaves a snapshot (the journal after it is empty).
 *
 * Settings: SOAK_MINUTES (20), SOAK_WINDOW_MINUTES (5; at most a third of the run),
 * SOAK_IDLE_S (60), SOAK_PRIVACY_RPS (100), SOAK_REFSYNC_RPS (100), SOAK_SYNC_EVERY_S (120),
 * SOAK_ITEMS (refsync items, 20000), SOAK_CITIZENS (5000), SOAK_SERVER_ARGS (extra mongo-server
 * flags, e.g. "--journal-max-bytes 33554432"), SOAK_KEEP_CRASHED (a folder: the data folder as the
 * SIGKILL left it is copied there before the restart, to profile that start-up again apart).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MongoClient } from 'mongodb';
import { startServerProcess, type ServerProcess } from '@nhp/mongo-server';
import { createTestIssuer, syntheticFnr } from '@nhp/privacy-testing';
import { startAppProcess, startNatsServer, type AppProcess } from '@nhp/shared-testing';
import { generateSynthetic, ROOT } from './support/programs';

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const MINUTES = env('SOAK_MINUTES', 20);
const WINDOW_S = Math.min(env('SOAK_WINDOW_MINUTES', 5) * 60, (MINUTES * 60) / 3);
const IDLE_S = env('SOAK_IDLE_S', 60);
const PRIVACY_RPS = env('SOAK_PRIVACY_RPS', 100);
const REFSYNC_RPS = env('SOAK_REFSYNC_RPS', 100);
const SYNC_EVERY_S = env('SOAK_SYNC_EVERY_S', 120);
const ITEMS = Math.round(env('SOAK_ITEMS', 20_000));
const CITIZENS = Math.round(env('SOAK_CITIZENS', 5000));
const SAMPLE_MS = 5000;
/** Requests of one API in flight at most; a request due while that many wait is counted as shed. */
const MAX_IN_FLIGHT = 64;
const MIB = 1024 * 1024;
const TARGETS = { rssTimesData: 3, rssPlusMiB: 150, p99LastOverFirst: 1.5 };

/** refsync's dev credentials, accepted outside production (the apps' READMEs). */
const DEV_API_KEY = 'local-dev-key';
const DEV_ADMIN_TOKEN = 'local-admin-token';
const SET_PATH = '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2';
const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
/** Template samtykke without a time limit. */
const SAMTYKKE_TEMPLATE = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01';

const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;
const verdict = (ok: boolean) => (ok ? 'MET' : 'NOT MET');

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

interface Sample {
  /** Seconds since the load started. */
  t: number;
  rss: number;
  /** CPU seconds of the server process so far. */
  cpuS: number;
  snapshotBytes: number;
  journalBytes: number;
}

/** RSS (bytes) and CPU time (s) of a process, from /proc (Linux). */
async function processUsage(pid: number): Promise<{ rss: number; cpuS: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { rss: rssKb * 1024, cpuS: ticks / 100 }; // USER_HZ is 100 on Linux
}

/** CPU ticks (1/100 s) each process on the machine has used so far, by pid, with a short name. */
async function cpuOfAll(): Promise<Map<number, { name: string; ticks: number }>> {
  const out = new Map<number, { name: string; ticks: number }>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ');
      const name =
        /apps\/([\w-]+)/.exec(cmd)?.[1] ??
        (cmd.includes('mongo-server') ? 'mongo-server' : undefined) ??
        (Number(entry) === process.pid ? 'this bench' : undefined) ??
        stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(Number(entry), { name, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The processes that used the most CPU between two cpuOfAll readings, as "name 120 ms, ...". */
function busiest(
  before: Map<number, { name: string; ticks: number }>,
  after: Map<number, { name: string; ticks: number }>,
  skip: number,
): string {
  return [...after]
    .filter(([pid]) => pid !== skip)
    .map(([pid, a]) => ({ name: a.name, ms: (a.ticks - (before.get(pid)?.ticks ?? 0)) * 10 }))
    .filter((p) => p.ms > 0)
    .sort((x, y) => y.ms - x.ms)
    .slice(0, 5)
    .map((p) => `${p.name} ${p.ms} ms`)
    .join(', ');
}

/** Sizes of the data file (snapshot) and its journal segments. */
async function dataFolder(dataFile: string): Promise<{ snapshot: number; journal: number }> {
  const dir = join(dataFile, '..');
  const base = dataFile.slice(dir.length + 1);
  let snapshot = 0;
  let journal = 0;
  for (const name of await readdir(dir)) {
    const size = await stat(join(dir, name))
      .then((s) => s.size)
      .catch(() => 0);
    if (name === base) snapshot += size;
    else if (name.startsWith(`${base}.journal.`)) journal += size;
  }
  return { snapshot, journal };
}

/** The data folder as a SIGKILL left it, copied to SOAK_KEEP_CRASHED when that is set. */
async function keepCrashedCopy(dataFile: string): Promise<void> {
  const to = process.env['SOAK_KEEP_CRASHED'];
  if (!to) return;
  const dir = join(dataFile, '..');
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true });
  for (const name of await readdir(dir)) await copyFile(join(dir, name), join(to, name));
  say(`data folder as the SIGKILL left it copied to ${to}`);
}

interface Latencies {
  /** [seconds since the load started, ms] of each answered request. */
  samples: Array<[number, number]>;
  errors: number;
  shed: number;
  firstError?: string;
}
const latencies = (): Latencies => ({ samples: [], errors: 0, shed: 0 });

/** What one request of a load was: which latencies it counts in, and what was wrong, if anything. */
interface Outcome {
  into: Latencies;
  problem?: string;
}

/**
 * Calls `send` `rps` times a second (open loop), recording each latency where its outcome says;
 * a request due while MAX_IN_FLIGHT wait is not sent and counted as shed in `shedInto`.
 */
function openLoop(
  rps: number,
  shedInto: Latencies,
  started: number,
  stopped: () => boolean,
  send: (n: number) => Promise<Outcome>,
): Promise<void> {
  let inFlight = 0;
  let n = 0;
  const pending = new Set<Promise<void>>();
  const one = (k: number) => {
    if (inFlight >= MAX_IN_FLIGHT) {
      shedInto.shed++;
      return;
    }
    inFlight++;
    const begun = nowMs();
    const p = send(k)
      .catch((err: unknown): Outcome => ({
        into: shedInto,
        problem: err instanceof Error ? err.message : String(err),
      }))
      .then(({ into, problem }) => {
        const end = nowMs();
        if (problem) {
          into.errors++;
          into.firstError ??= problem;
        } else into.samples.push([(begun - started) / 1000, end - begun]);
      })
      .finally(() => {
        inFlight--;
        pending.delete(p);
      });
    pending.add(p);
  };
  return (async () => {
    const t0 = nowMs();
    while (!stopped()) {
      const due = Math.floor(((nowMs() - t0) / 1000) * rps);
      while (n < due) one(n++);
      await sleep(5);
    }
    await Promise.all(pending);
  })();
}

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, text };
}

export async function run(): Promise<void> {
  const workDir = join(ROOT, 'tmp', 'bench-soak');
  await rm(workDir, { recursive: true, force: true });
  await mkdir(join(workDir, 'mongo'), { recursive: true });
  const dataFile = join(workDir, 'mongo', 'data');
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const serverArgs = (process.env['SOAK_SERVER_ARGS'] ?? '').split(' ').filter(Boolean);
    const mongo: ServerProcess = await startServerProcess({ dataFile, args: serverArgs });
    stops.push(() => mongo.stop());
    const nats = await startNatsServer();
    stops.push(() => nats.dispose());
    const mongoUrl = `${mongo.uri}/soak`;
    say(
      `load average at start: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    say(
      `soak: ${MINUTES} min of load (windows of ${(WINDOW_S / 60).toFixed(1)} min), ${IDLE_S} s idle; ` +
        `privacy ${PRIVACY_RPS}/s, refsync ${REFSYNC_RPS}/s, a 1% sync every ${SYNC_EVERY_S} s; ` +
        `${ITEMS} refsync items, ${CITIZENS} citizens; server ${mongo.uri}${serverArgs.length ? ` ${serverArgs.join(' ')}` : ''}`,
    );

    // refsync: two upstream states 1% apart, the importer's first sync, then the API.
    const treatment = Math.round(ITEMS / 10);
    const states = {
      original: { tg: join(workDir, 'tg-0.json'), rg: join(workDir, 'rg-0.json') },
      changed: { tg: join(workDir, 'tg-1.json'), rg: join(workDir, 'rg-1.json') },
    };
    await generateSynthetic('reimbursementGroup', ITEMS - treatment, states.original.rg, 0);
    await generateSynthetic('treatmentGroup', treatment, states.original.tg, 0);
    await generateSynthetic('reimbursementGroup', ITEMS - treatment, states.changed.rg, 0.01);
    await generateSynthetic('treatmentGroup', treatment, states.changed.tg, 0.01);
    const upstream = { tg: join(workDir, 'tg.json'), rg: join(workDir, 'rg.json') };
    const publish = async (state: keyof typeof states) => {
      await copyFile(states[state].tg, upstream.tg);
      await copyFile(states[state].rg, upstream.rg);
    };
    await publish('original');
    const app = async (
      name: string,
      entry: string,
      portVariable: string,
      extra: Record<string, string>,
      healthPath = '/health',
    ): Promise<AppProcess> => {
      const started = await startAppProcess({
        name,
        entry,
        portVariable,
        healthPath,
        startTimeoutMs: 120_000,
        env: { MONGO_URL: mongoUrl, NATS_URL: nats.url, LOG_LEVEL: 'warn', ...extra },
      });
      stops.push(() => started.stop());
      return started;
    };
    const importer = await app(
      'refsync-importer',
      'apps/refsync-importer/src/main.ts',
      'REFSYNC_IMPORTER_PORT',
      {
        REFSYNC_IMPORTER_HOST: '127.0.0.1',
        REFSYNC_SOURCE_TREATMENT_GROUP: pathToFileURL(upstream.tg).href,
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: pathToFileURL(upstream.rg).href,
        // Only the bench starts runs (POST /sync), apart from the worker's first one at start.
        REFSYNC_SCHEDULE: '0 0 1 1 *',
      },
      '/readyz',
    );
    const admin = { Authorization: `Bearer ${DEV_ADMIN_TOKEN}` };
    const sync = async (): Promise<{ ms: number; outcome: string }> => {
      const begun = nowMs();
      for (;;) {
        const answer = await post(`${importer.url}/sync?wait=true`, admin, undefined).catch(
          () => undefined,
        );
        // 409: a run is going on (the worker's first one at start); wait for it.
        if (answer?.status === 200) {
          const outcome = (JSON.parse(answer.text) as { outcome?: string }).outcome ?? '?';
          return { ms: nowMs() - begun, outcome };
        }
        await sleep(500);
      }
    };
    const initial = await sync();
    say(`initial import: ${(initial.ms / 1000).toFixed(1)} s (${initial.outcome})`);
    const refsync = await app(
      'refsync-api',
      'apps/refsync-api/src/main.ts',
      'REFSYNC_API_PORT',
      { REFSYNC_API_HOST: '127.0.0.1' },
      '/readyz',
    );

    // privacy: a trusted test issuer, a party and a replicated definition made through the API.
    const issuer = await createTestIssuer();
    const jwksFile = join(workDir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify(issuer.jwks));
    const privacy = await app('privacy-api', 'apps/privacy-api/src/main.ts', 'PRIVACY_API_PORT', {
      PRIVACY_API_HOST: '127.0.0.1',
      PRIVACY_AUTH_ISSUER: issuer.issuer,
      PRIVACY_AUTH_JWKS_FILE: jwksFile,
    });
    const token = await issuer.mint({ clientId: 'soak', scopes: ['admin'], expiresInSec: 7200 });
    const auth = { Authorization: `Bearer ${token}` };
    const partKode = `soak-${randomBytes(4).toString('hex')}`;
    const definisjonGuid = randomUUID();
    const made = [
      await post(`${privacy.url}/part/v1`, auth, { partKode, navn: 'Soak' }),
      await post(`${privacy.url}/innstillingdefinisjon/v1`, auth, {
        definisjonMalGuid: SAMTYKKE_TEMPLATE,
        definisjonGuid,
        partKode,
        navn: 'Soak-samtykke',
        replikering: true,
      }),
    ];
    for (const m of made) if (m.status !== 201) throw new Error(`setup: ${m.status} ${m.text}`);
    const fnrs = Array.from({ length: CITIZENS }, (_, i) => syntheticFnr(100_000 + i));

    // The load.
    const pid = mongo.pid as number;
    const samples: Sample[] = [];
    const started = nowMs();
    const sampleNow = async (): Promise<Sample> => {
      const [usage, folder] = await Promise.all([processUsage(pid), dataFolder(dataFile)]);
      return {
        t: (nowMs() - started) / 1000,
        rss: usage.rss,
        cpuS: usage.cpuS,
        snapshotBytes: folder.snapshot,
        journalBytes: folder.journal,
      };
    };
    samples.push(await sampleNow());
    let stopped = false;
    const sampler = setInterval(
      () =>
        void sampleNow().then(
          (s) => samples.push(s),
          () => undefined,
        ),
      SAMPLE_MS,
    );
    const sets = latencies();
    const statuses = latencies();
    const lists = latencies();
    let currentVersion = 0;
    const privacyLoad = openLoop(
      PRIVACY_RPS,
      sets,
      started,
      () => stopped,
      async (n) => {
        // Even requests set a citizen's setting, odd ones check another citizen's status.
        const k = Math.floor(n / 2);
        if (n % 2 === 0) {
          const fnr = fnrs[(k * 7919) % CITIZENS] as string;
          const answer = await post(`${privacy.url}${SET_PATH}`, auth, {
            innbyggerFnr: fnr,
            definisjonGuid,
            partKode,
            typePi: 'samtykke',
            aktiv: k % 3 !== 0,
          });
          const ok = answer.status === 200 && answer.text.includes('instansEndret');
          return ok
            ? { into: sets }
            : { into: sets, problem: `set: ${answer.status} ${answer.text}` };
        }
        const fnr = fnrs[(k * 104_729 + 1) % CITIZENS] as string;
        const answer = await post(`${privacy.url}${STATUS_PATH}`, auth, {
          innbyggerFnr: fnr,
          definisjonGuid,
          partKode,
        });
        const ok =
          answer.status === 200 &&
          (JSON.parse(answer.text) as { innbyggerFnr?: string }).innbyggerFnr === fnr;
        return ok
          ? { into: statuses }
          : { into: statuses, problem: `status: ${answer.status} ${answer.text}` };
      },
    );
    const refsyncLoad = openLoop(
      REFSYNC_RPS,
      lists,
      started,
      () => stopped,
      async (n) => {
        const dataset = n % 2 === 0 ? 'treatmentGroup' : 'reimbursementGroup';
        const since = Math.max(1, currentVersion - (n % 3) - 1);
        const res = await fetch(`${refsync.url}/api/v1/${dataset}?sinceVersion=${since}`, {
          headers: { 'X-API-KEY': DEV_API_KEY },
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        if (res.status !== 200) return { into: lists, problem: `list: ${res.status} ${text}` };
        const body = JSON.parse(text) as { currentVersion?: number };
        if (typeof body.currentVersion !== 'number')
          return { into: lists, problem: 'list: no currentVersion' };
        currentVersion = Math.max(currentVersion, body.currentVersion);
        return { into: lists };
      },
    );
    const syncs: string[] = [];
    const syncLoop = (async () => {
      let state: keyof typeof states = 'original';
      for (let next = SYNC_EVERY_S; ; next += SYNC_EVERY_S) {
        while (!stopped && nowMs() - started < next * 1000) await sleep(200);
        if (stopped) return;
        state = state === 'original' ? 'changed' : 'original';
        await publish(state);
        const s = await sync();
        syncs.push(`${Math.round(next / 60)} min: ${(s.ms / 1000).toFixed(1)} s ${s.outcome}`);
      }
    })();
    const progress = setInterval(() => {
      const s = samples[samples.length - 1];
      if (s)
        say(
          `  ${(s.t / 60).toFixed(1)} min: server RSS ${mib(s.rss)}, data ${mib(s.snapshotBytes)} + journal ${mib(s.journalBytes)}`,
        );
    }, 60_000);
    await sleep(MINUTES * 60_000);
    stopped = true;
    await Promise.all([privacyLoad, refsyncLoad, syncLoop]);
    clearInterval(progress);
    clearInterval(sampler);
    const loadEnd = await sampleNow();
    samples.push(loadEnd);
    await sleep(IDLE_S * 1000);
    const idle = await sampleNow();

    report({ samples, loadEnd, idle, sets, statuses, lists, syncs });

    // Start-up after a crash, then after a clean stop.
    const folder = await dataFolder(dataFile);
    const folderBytes = folder.snapshot + folder.journal;
    const bound = Math.max(1000, (folderBytes / (100 * MIB)) * 1000);
    // The driver's code is compiled on its first use in this process (the load used HTTP only): a
    // ping now keeps that compiling out of the restart's timing, which is the server's.
    await pingOnce(mongo.uri);
    await mongo.kill('SIGKILL');
    await keepCrashedCopy(dataFile);
    const afterKill = await timedStart(mongo);
    const beforeClean = await dataFolder(dataFile);
    await mongo.kill('SIGTERM');
    const afterStop = await dataFolder(dataFile);
    const afterClean = await timedStart(mongo);
    const shown = (s: StartTimes) =>
      `ping in ${s.wallMs} ms (listening after ${s.readyMs} ms; the server's CPU by then ${s.cpuMs} ms, ` +
      `its load ${s.loadMs} ms; ` +
      `the busiest other processes meanwhile: ${s.others || 'none'})`;
    say(
      `start-up: data folder ${mib(folderBytes)} (journal ${mib(folder.journal)}), load average ` +
        `${loadavg()[0]?.toFixed(1)}; after SIGKILL ${shown(afterKill)}: target ≤ ${Math.round(bound)} ms ` +
        `${verdict(afterKill.wallMs <= bound)} (by CPU: ${verdict(afterKill.cpuMs <= bound)})`,
    );
    say(
      `clean stop: left journal ${mib(afterStop.journal)} (was ${mib(beforeClean.journal)}), a ` +
        `snapshot: ${verdict(afterStop.journal === 0)}; then ${shown(afterClean)}`,
    );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

interface StartTimes {
  /** From the restart until a ping was answered. */
  wallMs: number;
  /** From the restart until the server said it listens (its "ready" line). */
  readyMs: number;
  /** CPU time the server process had used by then (what a busy machine does not inflate). */
  cpuMs: number;
  /** The server's own figure for loading the data file ("data file loaded"). */
  loadMs: number;
  /** The other processes that used the most CPU meanwhile. */
  others: string;
}

/**
 * Restarts the server and times it until it answers a ping. The ping is sent once the process says
 * it is ready (its "ready" line, logged once it listens), on a connection of its own: a client
 * polling before that, as this did, only tries again at the driver's next heartbeat (at least
 * 500 ms apart), so the time measured was rounded up to the next heartbeat rather than the server's.
 */
async function timedStart(mongo: ServerProcess): Promise<StartTimes> {
  const cpuBefore = await cpuOfAll();
  const begun = nowMs();
  await mongo.restart();
  const readyMs = Math.round(nowMs() - begun);
  const wallMs = Math.round((await pingOnce(mongo.uri)) - begun);
  const cpuMs = Math.round((await processUsage(mongo.pid as number)).cpuS * 1000);
  const loaded = mongo.lines.find((l) => l['msg'] === 'data file loaded');
  const others = busiest(cpuBefore, await cpuOfAll(), mongo.pid as number);
  return { wallMs, readyMs, cpuMs, loadMs: Number(loaded?.['ms'] ?? NaN), others };
}

/** One ping on a connection of its own (see timedStart); when it was answered (nowMs). */
async function pingOnce(uri: string): Promise<number> {
  const client = new MongoClient(uri, {
    directConnection: true,
    serverSelectionTimeoutMS: 60_000,
  });
  try {
    await client.db('admin').command({ ping: 1 });
    return nowMs();
  } finally {
    await client.close();
  }
}

function report(r: {
  samples: Sample[];
  loadEnd: Sample;
  idle: Sample;
  sets: Latencies;
  statuses: Latencies;
  lists: Latencies;
  syncs: string[];
}): void {
  const end = r.loadEnd.t;
  const windows = {
    first: [0, WINDOW_S] as const,
    last: [end - WINDOW_S, end] as const,
  };
  const data = (s: Sample) => s.snapshotBytes + s.journalBytes;
  const limit = (s: Sample) => TARGETS.rssTimesData * data(s) + TARGETS.rssPlusMiB * MIB;
  say(`syncs: ${r.syncs.join('; ') || 'none'}`);
  const rows: Record<string, Record<string, string>> = {};
  const p99s: Record<string, number[]> = {};
  for (const [name, [from, to]] of Object.entries(windows)) {
    const inWindow = r.samples.filter((s) => s.t >= from && s.t <= to);
    const a = inWindow[0] as Sample;
    const b = inWindow[inWindow.length - 1] as Sample;
    const row: Record<string, string> = {
      'server RSS (mean / max)': `${mib(inWindow.reduce((x, s) => x + s.rss, 0) / inWindow.length)} / ${mib(Math.max(...inWindow.map((s) => s.rss)))}`,
      'server CPU': `${(((b.cpuS - a.cpuS) / Math.max(1, b.t - a.t)) * 100).toFixed(0)}% of a core`,
      'data at end (snapshot + journal)': `${mib(b.snapshotBytes)} + ${mib(b.journalBytes)}`,
      'journal max': mib(Math.max(...inWindow.map((s) => s.journalBytes))),
    };
    for (const [api, l] of Object.entries({
      'privacy set': r.sets,
      'privacy status': r.statuses,
      'refsync list': r.lists,
    })) {
      const ms = l.samples.filter(([t]) => t >= from && t <= to).map(([, v]) => v);
      const p99 = percentile(ms, 99);
      (p99s[api] ??= []).push(p99);
      row[`${api} p50 / p99`] =
        `${percentile(ms, 50).toFixed(1)} / ${p99.toFixed(1)} ms (${ms.length})`;
    }
    rows[`${name} ${(WINDOW_S / 60).toFixed(1)} min`] = row;
  }
  const names = Object.keys(rows);
  const keys = Object.keys(rows[names[0] as string] as Record<string, string>);
  const width = Math.max(...keys.map((k) => k.length));
  say(`${''.padEnd(width)}  ${names.map((n) => n.padEnd(34)).join('')}`);
  for (const k of keys)
    say(`${k.padEnd(width)}  ${names.map((n) => (rows[n]?.[k] ?? '').padEnd(34)).join('')}`);

  const worst = r.samples.reduce((w, s) => (s.rss - limit(s) > w.rss - limit(w) ? s : w));
  const rssOk = r.samples.every((s) => s.rss <= limit(s));
  say(
    `server RSS within ${TARGETS.rssTimesData} × data folder + ${TARGETS.rssPlusMiB} MiB at every sample (${r.samples.length}): ` +
      `${verdict(rssOk)} (closest: ${mib(worst.rss)} at ${(worst.t / 60).toFixed(1)} min, limit ${mib(limit(worst))})`,
  );
  const first = r.samples[0] as Sample;
  say(
    `server RSS growth over the load: ${mib(r.loadEnd.rss - first.rss)} (data folder ${mib(data(r.loadEnd) - data(first))})`,
  );
  say(
    `after ${IDLE_S} s idle: RSS ${mib(r.idle.rss)}, data folder ${mib(data(r.idle))}, limit ${mib(limit(r.idle))}: ${verdict(r.idle.rss <= limit(r.idle))}`,
  );
  for (const [api, [a, b]] of Object.entries(p99s) as Array<[string, [number, number]]>) {
    say(
      `${api} p99 last / first: ${(b / a).toFixed(2)} (target ≤ ${TARGETS.p99LastOverFirst}): ${verdict(b / a <= TARGETS.p99LastOverFirst)}`,
    );
  }
  for (const [api, l] of Object.entries({
    'privacy sets': r.sets,
    'privacy status checks': r.statuses,
    'refsync lists': r.lists,
  })) {
    const shown = l.firstError ? `, first: ${l.firstError.slice(0, 300)}` : '';
    say(`${api}: ${l.errors} errors, ${l.shed} shed (over ${MAX_IN_FLIGHT} in flight)${shown}`);
  }
}
