// Benchmark of privacy-api's citizens' settings, every ratio measured in this run:
//  1. status checks per second (POST sjekkinnbyggerspistatus/v2) with DPoP-bound tokens, divided by
//     a bare node:http server doing the same single find by unique key through the same driver
//     against the same database (target >= 0.5);
//  2. the active-citizens walk over 100k instances: time of the last page over the first
//     (target <= 1.5), and the peak RSS of privacy-api during the walk (target <= 250 MB);
//  3. replication event latency from the acknowledged write to arrival in PRIVACY_EVENTS: p95
//     (target <= 200 ms).
// privacy-api runs as production runs it (the esbuild bundle of main.ts under plain node,
// NODE_ENV=production) in its own process, as do the bare server and the MongoDB-compatible
// server, so throughput and RSS are their own. Throughput rounds alternate the two servers, each
// driven by autocannon with the same connections and duration; the ratio is the median over the
// rounds of each DPoP round's rate over the bare round's right after it.
// Run: npm run bench -- privacy-api
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  PRIVACY_EVENTS_STREAM,
  settingChangedSubject,
  type SettingChangedEventData,
} from '@nhp/privacy-contracts';
import {
  createDefinitionRepository,
  createGrantRepository,
  createJournal,
  createPartRepository,
  SETTING_COUNTERS_COLLECTION,
  SETTINGS_COLLECTION,
} from '@nhp/privacy-data-access';
import { findTemplate, normaliseMetadata, type Definition } from '@nhp/privacy-domain';
import { createTestIssuer, syntheticFnr, type TestIssuer } from '@nhp/privacy-testing';
import { createLogger } from '@nhp/shared-logger';
import { connectNats, drainNats, type NatsConnection } from '@nhp/shared-messaging';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { freePort, startNatsServer, withDatabase } from '@nhp/shared-testing';
import { build } from 'esbuild';
import type { Connection } from 'mongoose';
import {
  ROOT,
  startCollectorStandIn,
  tracingOnEnv,
  TRACING_OFF_ENV,
  type CollectorStandIn,
} from './support/programs';

interface AutocannonResult {
  requests: { average: number; total: number };
  errors: number;
  non2xx: number;
}
interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: Array<{
    method: string;
    path: string;
    headers: Record<string, string>;
    setupRequest: (req: AutocannonRequest) => AutocannonRequest;
  }>;
}) => Promise<AutocannonResult>;
// autocannon ships no type declarations.
const autocannon = createRequire(__filename)('autocannon') as Autocannon;

const CONNECTIONS = 10;
const DURATION_S = 3;
// PRIVACY_BENCH_ROUNDS changes the number of paired rounds (odd, so that the median is one round).
const ROUNDS = Math.max(1, Math.floor(Number(process.env['PRIVACY_BENCH_ROUNDS'] ?? 5)) || 5);
const STATUS_CITIZENS = 500;
const WALK_INSTANCES = 100_000;
const PAGE_SIZE = 1000;
const EVENT_WRITES = 200;
const TARGETS = {
  statusRatio: 0.5,
  lastOverFirst: 1.5,
  rssMb: 250,
  eventP95Ms: 200,
  /** Tracing on (10% sampled, exported) may cost the status ratio at most 10%. */
  tracingOnOverOff: 0.9,
};
const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
const SET_PATH = '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2';
const ACTIVE_PATH = '/personverninnstillinger/hentinnbyggereaktivepifordefinisjon/v2';
const CLIENT = 'bench-client';
/** USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on every common Linux). */
const CLOCK_TICKS_PER_S = 100;

const silent = createLogger({ name: 'bench', level: 'silent' });
const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

function rssMbOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used, in ms; 0 when it cannot be read. */
function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // Fields 14 and 15 of /proc/<pid>/stat, counted after the command name in parentheses.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

function spawnProgram(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    // PRIVACY_BENCH_LOGS=1 shows the programs' own log lines (to see why a run failed).
    stdio: ['ignore', process.env['PRIVACY_BENCH_LOGS'] === '1' ? 'inherit' : 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (c: Buffer) => (errors = (errors + c.toString()).slice(-4000)));
  child.on('exit', (code) => {
    if (code && code !== 0 && !child.killed)
      process.stderr.write(`${args[0]} exited ${code}\n${errors}`);
  });
  return child;
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

async function waitFor(url: string, what: string, anyStatus = false): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(url)
      .then((r) => anyStatus || r.status < 500)
      .catch(() => false);
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`${what} did not come up at ${url}`);
}

async function bundle(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    outfile,
  });
  return outfile;
}

/** The baseline: a bare node:http server doing the same find by unique key (same driver, database). */
const BARE_SERVER = `
const http = require('node:http');
const { MongoClient } = require('mongodb');
(async () => {
  const client = await new MongoClient(process.env.MONGO_URL).connect();
  const settings = client.db().collection('${SETTINGS_COLLECTION}');
  http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const doc = await settings.findOne(
          { innbyggerFnr: body.innbyggerFnr, definisjonGuid: body.definisjonGuid },
          { projection: { history: 0, journal: 0 } },
        );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(doc));
      } catch (err) {
        res.writeHead(500);
        res.end(String(err));
      }
    });
  }).listen(Number(process.env.PORT), '127.0.0.1');
  // An orderly exit on SIGTERM, so that --cpu-prof (PRIVACY_BENCH_PROFILE) writes its profile.
  process.on('SIGTERM', () => process.exit(0));
})();
`;

interface Stack {
  workDir: string;
  mongoUrl: string;
  natsUrl: string;
  mongoProcess: ChildProcess;
  nats: { dispose(): Promise<void> };
  app?: ChildProcess;
  /** The same bundle with tracing on (10% sampled), exporting to `collector`. */
  tracedApp?: ChildProcess;
  tracedUrl: string;
  collector: CollectorStandIn;
  bare?: ChildProcess;
  appUrl: string;
  bareUrl: string;
  issuer: TestIssuer;
  conn: Connection;
}

async function startStack(): Promise<Stack> {
  const workDir = join(ROOT, 'tmp', 'bench-privacy-api');
  await mkdir(workDir, { recursive: true });
  const mongoPort = await freePort();
  const mongoProcess = spawnProgram(
    ['--import', 'tsx', 'tools/mongo-server/src/cli.ts', '--port', String(mongoPort)],
    { TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.base.json'), LOG_LEVEL: 'warn' },
  );
  const mongoUrl = withDatabase(
    `mongodb://127.0.0.1:${mongoPort}`,
    `bench_${randomUUID().slice(0, 8)}`,
  );
  let conn: Connection | undefined;
  for (let i = 0; i < 100 && !conn; i++) {
    conn = await connectMongo({ uri: mongoUrl, logger: silent }).catch(async () => {
      await sleep(200);
      return undefined;
    });
  }
  if (!conn) throw new Error('the MongoDB-compatible server did not start');
  const nats = await startNatsServer();
  const issuer = await createTestIssuer();
  const jwksFile = join(workDir, 'jwks.json');
  await writeFile(jwksFile, JSON.stringify(issuer.jwks));

  const appBundle = await bundle(
    join(ROOT, 'apps/privacy-api/src/main.ts'),
    join(workDir, 'main.js'),
  );
  const appPort = await freePort();
  // PRIVACY_BENCH_PROFILE=1 writes CPU profiles of privacy-api and of the bare server into
  // tmp/bench-privacy-api/ (privacy-api.cpuprofile, bare.cpuprofile), to compare what each spends.
  const profile = (name: string) =>
    process.env['PRIVACY_BENCH_PROFILE'] === '1'
      ? ['--cpu-prof', `--cpu-prof-dir=${workDir}`, `--cpu-prof-name=${name}.cpuprofile`]
      : [];
  const appEnv = (port: number) => ({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    MONGO_URL: mongoUrl,
    NATS_URL: nats.url,
    MONGO_SYNC_INDEXES_ON_START: 'true',
    PRIVACY_API_PORT: String(port),
    PRIVACY_API_HOST: '127.0.0.1',
    PRIVACY_AUTH_ISSUER: issuer.issuer,
    PRIVACY_AUTH_JWKS_FILE: jwksFile,
    PRIVACY_ALLOW_SYNTHETIC_IDS: 'true',
    PRIVACY_PAGE_SIZE: String(PAGE_SIZE),
  });
  const app = spawnProgram([...profile('privacy-api'), appBundle], {
    ...appEnv(appPort),
    ...TRACING_OFF_ENV,
  });
  const appUrl = `http://127.0.0.1:${appPort}`;
  await waitFor(`${appUrl}/health`, 'privacy-api');
  const collector = await startCollectorStandIn();
  const tracedPort = await freePort();
  const tracedApp = spawnProgram([appBundle], {
    ...appEnv(tracedPort),
    ...tracingOnEnv(collector.url),
  });
  const tracedUrl = `http://127.0.0.1:${tracedPort}`;
  await waitFor(`${tracedUrl}/health`, 'privacy-api (tracing on)');

  const bareFile = join(workDir, 'bare.js');
  await writeFile(bareFile, BARE_SERVER);
  const barePort = await freePort();
  const bare = spawnProgram([...profile('bare'), bareFile], {
    MONGO_URL: mongoUrl,
    PORT: String(barePort),
  });
  const bareUrl = `http://127.0.0.1:${barePort}`;
  await waitFor(bareUrl, 'the bare server', true);

  return {
    workDir,
    mongoUrl,
    natsUrl: nats.url,
    mongoProcess,
    nats,
    app,
    tracedApp,
    tracedUrl,
    collector,
    bare,
    appUrl,
    bareUrl,
    issuer,
    conn,
  };
}

async function seedDefinitions(stack: Stack) {
  const journal = createJournal({ connection: stack.conn, logger: silent });
  const options = { connection: stack.conn, journal, now: () => new Date(), cacheTtlMs: 0 };
  const audit = { actor: { kind: 'admin' as const, id: 'bench' } };
  const parts = createPartRepository(options);
  const definitions = createDefinitionRepository(options);
  const grants = createGrantRepository(options);
  const partKode = 'bench';
  await parts.create(
    { partKode, navn: 'Bench', kortNavn: null, beskrivelse: null, uri: null },
    audit,
  );
  const template = findTemplate('7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02')!;
  const make = (replikering: boolean): Definition => ({
    definisjonGuid: randomUUID(),
    definisjonMalGuid: template.definisjonMalGuid,
    partKode,
    navn: 'Reservasjon',
    beskrivelse: null,
    visning: null,
    fullstendigTekstInnhold: null,
    kravTilLesingAvFullstendigTekst: false,
    sortering: null,
    replikering,
    relasjoner: [],
    status: 'aktiv',
    typePi: template.typePi,
    fasteMetadata: structuredClone(template.fasteMetadata),
    takesPeriods: false,
  });
  const status = make(false);
  const walk = make(false);
  const replicated = make(true);
  for (const d of [status, walk, replicated]) await definitions.create(d, audit);
  await grants.set(CLIENT, partKode, { read: true, write: true }, audit);
  await journal.idle();
  return { status, walk, replicated };
}

async function setSetting(
  stack: Stack,
  auth: string,
  body: Record<string, unknown>,
): Promise<void> {
  const res = await fetch(`${stack.appUrl}${SET_PATH}`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`set answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function statusThroughput(stack: Stack, definition: Definition) {
  const writer = await stack.issuer.bearer({ clientId: CLIENT, scopes: ['write'] });
  const citizens = Array.from({ length: STATUS_CITIZENS }, (_, i) => syntheticFnr(i));
  for (const fnr of citizens) {
    await setSetting(stack, writer, {
      innbyggerFnr: fnr,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
      aktiv: true,
    });
  }
  const bodies = citizens.map((innbyggerFnr) =>
    JSON.stringify({
      innbyggerFnr,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    }),
  );
  const key = await stack.issuer.newDpopKey('ES256');
  const token = await stack.issuer.mint({
    clientId: CLIENT,
    scopes: ['read'],
    dpopKey: key,
    expiresInSec: 3600,
  });

  const bearer = await stack.issuer.bearer({
    clientId: CLIENT,
    scopes: ['read'],
    expiresInSec: 3600,
  });
  type Mode = 'dpop' | 'bearer' | 'none';

  /** req/s, and CPU milliseconds the server process spent per request (its own utime + stime). */
  async function drive(base: string, mode: Mode, pid: number | undefined) {
    // One fresh proof per request (jti never repeats), made before the round so that signing them
    // costs the load generator nothing while it measures.
    const proofs: string[] = [];
    if (mode === 'dpop') {
      for (let i = 0; i < 4000 * DURATION_S; i++) {
        proofs.push(
          await stack.issuer.dpopProof({
            key,
            method: 'POST',
            url: `${base}${STATUS_PATH}`,
            accessToken: token,
          }),
        );
      }
    }
    let n = 0;
    const cpuBefore = cpuMsOf(pid);
    const result = await autocannon({
      url: base,
      connections: CONNECTIONS,
      duration: DURATION_S,
      requests: [
        {
          method: 'POST',
          path: STATUS_PATH,
          headers: { 'content-type': 'application/json' },
          setupRequest: (req) => {
            const i = n++;
            const headers: Record<string, string> = { ...req.headers };
            if (mode === 'dpop') {
              headers['authorization'] = `DPoP ${token}`;
              headers['dpop'] = proofs[i % proofs.length] as string;
            } else if (mode === 'bearer') {
              headers['authorization'] = bearer;
            }
            return { ...req, headers, body: bodies[i % bodies.length] as string };
          },
        },
      ],
    });
    if (result.non2xx > 0 || result.errors > 0) {
      say(`  (warning: ${result.non2xx} non-2xx, ${result.errors} errors on ${base})`);
    }
    const cpuMs = (cpuMsOf(pid) - cpuBefore) / Math.max(1, result.requests.total);
    return { rate: result.requests.average, cpuMs };
  }

  const app: Array<{ rate: number; cpuMs: number }> = [];
  const appBearer: Array<{ rate: number; cpuMs: number }> = [];
  const bare: Array<{ rate: number; cpuMs: number }> = [];
  const traced: Array<{ rate: number; cpuMs: number }> = [];
  await drive(stack.appUrl, 'dpop', stack.app?.pid); // warm-up (JIT, caches, connection pools)
  await drive(stack.bareUrl, 'none', stack.bare?.pid);
  await drive(stack.tracedUrl, 'dpop', stack.tracedApp?.pid);
  for (let round = 0; round < ROUNDS; round++) {
    app.push(await drive(stack.appUrl, 'dpop', stack.app?.pid));
    bare.push(await drive(stack.bareUrl, 'none', stack.bare?.pid));
    // Tracing on, right after the bare round it is compared with.
    traced.push(await drive(stack.tracedUrl, 'dpop', stack.tracedApp?.pid));
    appBearer.push(await drive(stack.appUrl, 'bearer', stack.app?.pid));
  }
  const summary = (runs: Array<{ rate: number; cpuMs: number }>) => ({
    rate: median(runs.map((r) => r.rate)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
  });
  // Each DPoP round is compared with the bare round right after it, so that a change in what the
  // machine can give (other VMs on the host, turbo) between rounds moves both sides of one ratio.
  const ratios = app.map((a, i) => a.rate / (bare[i] as { rate: number }).rate);
  const tracedRatios = traced.map((t, i) => t.rate / (bare[i] as { rate: number }).rate);
  return {
    app: summary(app),
    appBearer: summary(appBearer),
    bare: summary(bare),
    traced: summary(traced),
    ratio: median(ratios),
    ratios,
    tracedRatio: median(tracedRatios),
    tracedRatios,
  };
}

async function walk(stack: Stack, definition: Definition) {
  // Seeded through the driver in the repository's own document shape, as 100k sets would leave it.
  const settings = stack.conn.collection(SETTINGS_COLLECTION);
  const metadata = normaliseMetadata('reservasjon', null);
  const at = new Date('2026-01-01T00:00:00Z');
  for (let start = 0; start < WALK_INSTANCES; start += 2000) {
    const docs = [];
    for (let i = start; i < Math.min(WALK_INSTANCES, start + 2000); i++) {
      docs.push({
        _id: randomUUID() as never,
        innbyggerFnr: syntheticFnr(1_000_000 + i),
        definisjonGuid: definition.definisjonGuid,
        partKode: definition.partKode,
        typePi: 'reservasjon',
        aktiv: i % 10 !== 0,
        metadata,
        sekvensnummer: 1,
        opprettetTidspunkt: at,
        sistEndretTidspunkt: at,
        proofSha256: null,
        pagingKey: i + 1,
        version: 1,
        history: [
          {
            recordNo: 1,
            sekvensnummer: 1,
            applied: true,
            tidspunkt: at,
            registrert: at,
            aktiv: true,
            metadata,
            proof: null,
          },
        ],
      });
    }
    await settings.insertMany(docs, { ordered: false });
  }
  await stack.conn
    .collection<{ _id: string; last: number }>(SETTING_COUNTERS_COLLECTION)
    .updateOne(
      { _id: definition.definisjonGuid },
      { $set: { last: WALK_INSTANCES } },
      { upsert: true },
    );

  const auth = await stack.issuer.bearer({
    clientId: CLIENT,
    scopes: ['read'],
    expiresInSec: 3600,
  });
  let peakRss = rssMbOf(stack.app?.pid);
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMbOf(stack.app?.pid))), 25);
  const times: number[] = [];
  let entries = 0;
  let cursor = 0;
  try {
    do {
      const t0 = now();
      const res = await fetch(
        `${stack.appUrl}${ACTIVE_PATH}?definisjonGuid=${definition.definisjonGuid}&pagingReference=${cursor}`,
        { headers: { authorization: auth } },
      );
      const page = (await res.json()) as {
        pagingReference: number;
        personvernInnstillinger: unknown[];
      };
      times.push(now() - t0);
      if (res.status !== 200) throw new Error(`walk answered ${res.status}`);
      entries += page.personvernInnstillinger.length;
      cursor = page.pagingReference;
    } while (cursor !== 0);
  } finally {
    clearInterval(sampler);
  }
  // The last full page: the final one may be short (it is the remainder).
  const first = times[0] as number;
  const last = times[times.length - 2] ?? (times[times.length - 1] as number);
  return { pages: times.length, entries, first, last, peakRss };
}

async function eventLatency(stack: Stack, definition: Definition) {
  const writer = await stack.issuer.bearer({
    clientId: CLIENT,
    scopes: ['write'],
    expiresInSec: 3600,
  });
  const nc: NatsConnection = await connectNats({
    servers: stack.natsUrl,
    name: 'bench',
    logger: silent,
  });
  const body = (fnr: string, aktiv: boolean) => ({
    innbyggerFnr: fnr,
    definisjonGuid: definition.definisjonGuid,
    partKode: definition.partKode,
    aktiv,
  });
  // The first write makes privacy-api provision the stream.
  await setSetting(stack, writer, body(syntheticFnr(5_000_000), true));
  const jsm = await jetstreamManager(nc);
  for (let i = 0; i < 100; i++) {
    if (
      await jsm.streams.info(PRIVACY_EVENTS_STREAM).then(
        () => true,
        () => false,
      )
    )
      break;
    await sleep(100);
  }
  const arrived = new Map<string, number>();
  const consumer = await jetstream(nc).consumers.get(PRIVACY_EVENTS_STREAM, {
    // One subject as a string: nats-server before 2.10 knows no list of filters.
    filter_subjects: settingChangedSubject(definition.partKode),
    deliver_policy: DeliverPolicy.New,
  });
  const messages = await consumer.consume();
  const reading = (async () => {
    for await (const msg of messages) {
      const data = msg.json<{ data: SettingChangedEventData }>().data;
      arrived.set(`${data.innbyggerFnr}/${data.sekvensnummer}`, now());
    }
  })();

  const acked = new Map<string, number>();
  for (let i = 0; i < EVENT_WRITES; i++) {
    const fnr = syntheticFnr(5_000_001 + (i % (EVENT_WRITES / 2)));
    const round = Math.floor(i / (EVENT_WRITES / 2));
    await setSetting(stack, writer, body(fnr, round === 0));
    acked.set(`${fnr}/${round + 1}`, now());
    await sleep(5);
  }
  for (let i = 0; i < 100 && arrived.size < acked.size; i++) await sleep(100);
  messages.stop();
  await reading.catch(() => undefined);
  await drainNats(nc);
  const latencies = [...acked].map(([key, t]) => Math.max(0, (arrived.get(key) ?? Infinity) - t));
  return {
    received: [...acked.keys()].filter((k) => arrived.has(k)).length,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
  };
}

export async function run(): Promise<void> {
  const stack = await startStack();
  try {
    const { status, walk: walkDef, replicated } = await seedDefinitions(stack);
    // PRIVACY_BENCH_ONLY=status,walk,events runs a subset (while working on one figure).
    const only = process.env['PRIVACY_BENCH_ONLY']?.split(',');
    const want = (part: string) => !only || only.includes(part);

    if (want('status')) {
      say(
        `status checks: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S} s each, medians`,
      );
      const t = await statusThroughput(stack, status);
      const ratio = t.ratio;
      // The machine is shared: req/s depends on what else runs, so the run says how busy it was.
      say(
        `  load average after the rounds: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
      say(
        `  privacy-api, DPoP-bound token, proof per request: ${t.app.rate.toFixed(0)} req/s, ${t.app.cpuMs.toFixed(2)} ms CPU per request`,
      );
      say(
        `  privacy-api, bearer token (for comparison):       ${t.appBearer.rate.toFixed(0)} req/s, ${t.appBearer.cpuMs.toFixed(2)} ms CPU per request`,
      );
      say(
        `  bare node:http, same findOne:                     ${t.bare.rate.toFixed(0)} req/s, ${t.bare.cpuMs.toFixed(2)} ms CPU per request`,
      );
      say(
        `  per round, DPoP / the bare round after it: ${t.ratios.map((r) => r.toFixed(2)).join(' ')}`,
      );
      say(
        `  ratio (median of the rounds) ${ratio.toFixed(2)} (target >= ${TARGETS.statusRatio}) ${ratio >= TARGETS.statusRatio ? 'PASS' : 'FAIL'}`,
      );
      const exported = await stack.collector.received();
      say(
        `  tracing on (10% sampled, OTLP to a local stand-in: ${exported.exports} exports, ${(exported.bytes / 1024).toFixed(0)} KiB): ${t.traced.rate.toFixed(0)} req/s, ${t.traced.cpuMs.toFixed(2)} ms CPU per request`,
      );
      say(
        `  per round, tracing on / the bare round before it: ${t.tracedRatios.map((r) => r.toFixed(2)).join(' ')}`,
      );
      const cost = t.tracedRatio / ratio;
      say(
        `  ratio with tracing on ${t.tracedRatio.toFixed(2)}; on / off ${cost.toFixed(2)} (target >= ${TARGETS.tracingOnOverOff}) ${cost >= TARGETS.tracingOnOverOff ? 'PASS' : 'FAIL'}`,
      );
    }

    if (want('walk')) {
      say(`active-citizen walk: ${WALK_INSTANCES} instances (90% active), pages of ${PAGE_SIZE}`);
      const w = await walk(stack, walkDef);
      const pageRatio = w.last / w.first;
      say(
        `  ${w.pages} pages, ${w.entries} entries; first page ${w.first.toFixed(0)} ms, last full page ${w.last.toFixed(0)} ms`,
      );
      say(
        `  last/first ${pageRatio.toFixed(2)} (target <= ${TARGETS.lastOverFirst}) ${pageRatio <= TARGETS.lastOverFirst ? 'PASS' : 'FAIL'}`,
      );
      say(
        `  peak RSS of privacy-api during the walk ${w.peakRss.toFixed(0)} MB (target <= ${TARGETS.rssMb}) ${w.peakRss <= TARGETS.rssMb ? 'PASS' : 'FAIL'}`,
      );
    }

    if (want('events')) {
      say(`replication events: ${EVENT_WRITES} changes, one at a time`);
      const e = await eventLatency(stack, replicated);
      say(
        `  ${e.received}/${EVENT_WRITES} arrived; p50 ${e.p50.toFixed(1)} ms, p95 ${e.p95.toFixed(1)} ms (target <= ${TARGETS.eventP95Ms}) ${e.p95 <= TARGETS.eventP95Ms ? 'PASS' : 'FAIL'}`,
      );
    }
  } finally {
    await closeMongo(stack.conn).catch(() => undefined);
    await stop(stack.app);
    await stop(stack.tracedApp);
    stack.collector.stop();
    await stop(stack.bare);
    await stop(stack.mongoProcess);
    await stack.nats.dispose();
    await rm(join(stack.workDir, 'jwks.json'), { force: true });
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
