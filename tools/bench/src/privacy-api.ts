// Benchmark of privacy-api, every ratio against a floor measured in the same run, by the method of
// support/paired.ts (privacy-api and a bare node:http + driver server pinned to one CPU, driven at
// the same time with the same request bytes, every answer checked, any wrong answer fails the run):
//  1. status checks (POST sjekkinnbyggerspistatus/v2) with a DPoP-bound token and a proof per
//     request / the floor's findOne (target >= 0.60); with a bearer token (target >= 0.85); the
//     same two against the floor coalescing its reads as privacy-api does, which for DPoP also
//     checks the proof's ES256 signature (targets >= 0.85 bearer, >= 0.70 DPoP); with the DPoP
//     replay store in NATS (PRIVACY_DPOP_REPLAY_STORE=nats; printed); tracing on / off (target
//     >= 0.85). Every privacy-api runs as behind a trusted load balancer (HTTP_TRUST_PROXY, as
//     docker-compose.ha.yml runs it), every request carries the X-Forwarded-* headers one sends,
//     and the floors read them the same way;
//  2. privacy-api's RSS after those 40 s of status checks (target <= 160 MB);
//  3. peak RSS while 8 clients upload 4 MiB proofs at once under a status load (target <= 350 MB);
//  4. sets that change the setting (endret) / the floor's findOneAndUpdate with the journaled
//     write concern (target >= 0.4); and sets with the journal (j: true) / without (target >= 0.6);
//  5. the active-citizens walk over 100k instances: last page over first (target <= 1.5) and peak
//     RSS (target <= 250 MB);
//  6. replication event latency from the acknowledged write to arrival in PRIVACY_EVENTS: p95
//     (target <= 200 ms).
// privacy-api runs as production runs it (the esbuild bundle of main.ts under plain node,
// NODE_ENV=production) in its own process, as do the floor, the MongoDB-compatible server and NATS.
// Run: npm run bench -- privacy-api
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
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
import {
  definitionFromTemplate,
  findTemplate,
  normaliseMetadata,
  type Definition,
} from '@nhp/privacy-domain';
import { createTestIssuer, syntheticFnr, type TestIssuer } from '@nhp/privacy-testing';
import { createLogger } from '@nhp/shared-logger';
import { connectNats, drainNats, type NatsConnection } from '@nhp/shared-messaging';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import {
  composeNodeOptions,
  freePort,
  present,
  startNatsServer,
  withDatabase,
} from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  cpuPinning,
  describePinning,
  driveTogether,
  PAIRED_CONNECTIONS,
  PAIRED_ROUND_S,
  pinProcess,
  rssOf,
  summariseRounds,
  verdict,
  type Pinning,
  type Side,
  type SideResult,
} from './support/paired';
import {
  bundleApp,
  ROOT,
  sourceRoot,
  startCollectorStandIn,
  tracingOnEnv,
  privacyApiBenchEnv,
  type CollectorStandIn,
} from './support/programs';
import { serverNodeArgs } from '@nhp/mongo-server';
import { deployedMemoryLimit, memoryLimit, type MemoryLimit } from './support/memory-limit';
import { spawnProgram, stopProgram, waitForUrl } from './support/processes';

const CONNECTIONS = PAIRED_CONNECTIONS;
const DURATION_S = PAIRED_ROUND_S;
// PRIVACY_BENCH_ROUNDS changes the number of paired rounds (odd, so that the median is one round).
const ROUNDS = Math.max(1, Math.floor(Number(process.env['PRIVACY_BENCH_ROUNDS'] ?? 5)) || 5);
const SET_ROUNDS = ROUNDS;
const STATUS_CITIZENS = 2000;
const UPLOADERS = 8;
const UPLOAD_SECONDS = 10;
const PROOF_BYTES = 4 * 1024 * 1024;
const WALK_INSTANCES = 100_000;
const PAGE_SIZE = 1000;
const EVENT_WRITES = 200;
const TARGETS = {
  dpopRatio: 0.6,
  bearerRatio: 0.85,
  statusRssMb: 160,
  uploadPeakRssMb: 350,
  setRatio: 0.4,
  journalRatio: 0.6,
  lastOverFirst: 1.5,
  rssMb: 250,
  eventP95Ms: 200,
  /** Against the floor that coalesces its reads as privacy-api does (issue 33). */
  bearerCoalescingRatio: 0.85,
  /** The same, for DPoP, the floor also checking the proof's ES256 signature (issue 33). */
  dpopCoalescingRatio: 0.7,
  /** Tracing on (10% sampled, exported) against off, at once (issue 33). */
  tracingOnOverOff: 0.85,
};
/**
 * privacy-api runs as behind the HA topology's load balancer: HTTP_TRUST_PROXY names the peers
 * whose X-Forwarded-* count (here the load generator's loopback), and every request carries the
 * headers a load balancer adds. A DPoP proof names the public URL they describe.
 */
const TRUST_PROXY = 'loopback';
const PUBLIC_HOST = 'personvern.bench.example';
const FORWARDED: Record<string, string> = {
  'x-forwarded-proto': 'https',
  'x-forwarded-host': PUBLIC_HOST,
  'x-forwarded-for': '203.0.113.10',
};
const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
const SET_PATH = '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2';
const ACTIVE_PATH = '/personverninnstillinger/hentinnbyggereaktivepifordefinisjon/v2';
const CLIENT = 'bench-client';
const silent = createLogger({ name: 'bench', level: 'silent' });
const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

/** Where the floor's sets write: a copy of the settings, so that the two sides never meet. */
const FLOOR_SETTINGS_COLLECTION = 'bench_floor_settings';

/**
 * The floor: a bare node:http server doing the least each request needs, through the same driver
 * against the same database. A status check: parse the JSON body, one findOne by the unique key
 * (history and journal projected out, as privacy-api reads), answer the document. A set: one
 * findOneAndUpdate with the journaled write concern privacy-api uses, answer the document.
 */
const BARE_SERVER = `
const http = require('node:http');
const crypto = require('node:crypto');
const proxyaddr = require('proxy-addr');
const { MongoClient } = require('mongodb');
// The URL a request addressed, read as Express reads it under HTTP_TRUST_PROXY (TRUST_PROXY, the
// same setting): X-Forwarded-Proto and -Host count when proxy-addr trusts the peer.
const trust = proxyaddr.compile((process.env.TRUST_PROXY || '').split(',').map((v) => v.trim()).filter(Boolean));
const urlOf = (req) => {
  let proto = 'http';
  let host = req.headers.host;
  if (trust(req.socket.remoteAddress, 0)) {
    if (req.headers['x-forwarded-proto']) proto = req.headers['x-forwarded-proto'].split(',')[0].trim();
    if (req.headers['x-forwarded-host']) host = req.headers['x-forwarded-host'].split(',')[0].trim();
  }
  return proto + '://' + host + req.url.split('?')[0];
};
// VERIFY_DPOP=1: a request with a DPoP header has its proof checked for the least a DPoP check
// cannot skip: typ, alg, htm, htu (the URL above) and its ES256 signature by the key it carries,
// on the thread pool as privacy-api checks it; the key imported once per header, as privacy-api
// keeps checked headers.
const keys = new Map();
const verifyProof = (proof, url) => new Promise((resolve, reject) => {
  const [h, p, s] = String(proof).split('.');
  let key = keys.get(h);
  if (!key) {
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    if (header.typ !== 'dpop+jwt' || header.alg !== 'ES256') return reject(new Error('bad proof header'));
    key = crypto.createPublicKey({ key: header.jwk, format: 'jwk' });
    if (keys.size > 1000) keys.clear();
    keys.set(h, key);
  }
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  if (payload.htm !== 'POST' || payload.htu !== url) return reject(new Error('proof for another request'));
  crypto.verify('sha256', Buffer.from(h + '.' + p), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'),
    (err, ok) => (err || !ok ? reject(err || new Error('bad signature')) : resolve()));
});
(async () => {
  // The write concern on the client, as privacy-api's connection has it (MONGO_WRITE_CONCERN,
  // w=majority,j=true by default): the driver carries a client's write concern into every
  // operation's options, reads included, so a floor with it only on its writes would read more
  // cheaply than any service configured the way privacy-api is (tools/bench/README.md, issue 33).
  const writeConcern = { w: 'majority', j: true };
  const client = await new MongoClient(process.env.MONGO_URL, { writeConcern }).connect();
  const settings = client.db().collection('${SETTINGS_COLLECTION}');
  const floor = client.db().collection('${FLOOR_SETTINGS_COLLECTION}');
  const projection = { history: 0, journal: 0 };
  // COALESCE=1: the status reads asked for in one turn of the event loop go out as one find of the
  // $or of their keys, as privacy-api's point reads do (shared-persistence pointReads).
  let waiting = [];
  const flush = async () => {
    const batch = waiting;
    waiting = [];
    if (batch.length === 1) {
      settings.findOne(batch[0].key, { projection }).then(batch[0].resolve, batch[0].reject);
      return;
    }
    try {
      const docs = await settings.find({ $or: batch.map((b) => b.key) }, { projection }).toArray();
      const byKey = new Map(docs.map((d) => [d.innbyggerFnr + '|' + d.definisjonGuid, d]));
      for (const b of batch) b.resolve(byKey.get(b.key.innbyggerFnr + '|' + b.key.definisjonGuid) ?? null);
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  };
  const read = process.env.COALESCE === '1'
    ? (key) => new Promise((resolve, reject) => {
        if (waiting.push({ key, resolve, reject }) === 1) setImmediate(flush);
      })
    : (key) => settings.findOne(key, { projection });
  http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const url = urlOf(req);
        if (process.env.VERIFY_DPOP === '1' && req.headers.dpop) await verifyProof(req.headers.dpop, url);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const key = { innbyggerFnr: body.innbyggerFnr, definisjonGuid: body.definisjonGuid };
        const doc = req.url === '${SET_PATH}'
          ? await floor.findOneAndUpdate(
              key,
              { $set: { aktiv: body.aktiv, sistEndretTidspunkt: new Date() }, $inc: { sekvensnummer: 1 } },
              { projection, returnDocument: 'after', writeConcern },
            )
          : await read(key);
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

const againstBundleName = () => {
  const ratio = process.env['PRIVACY_BENCH_AGAINST_SAMPLER_ARG'];
  const name = process.env['PRIVACY_BENCH_AGAINST'] ?? '';
  return ratio === undefined ? name : `${name} (its traced instance sampling ${ratio})`;
};

/** A measured server process. */
interface Server {
  url: string;
  pid: number | undefined;
}

interface Stack {
  workDir: string;
  pinning: Pinning | undefined;
  mongoUrl: string;
  natsUrl: string;
  mongoProcess: ChildProcess;
  nats: { dispose(): Promise<void> };
  /** privacy-api with the default DPoP replay store (memory). */
  app: ChildProcess;
  appUrl: string;
  /** A second privacy-api, PRIVACY_DPOP_REPLAY_STORE=nats, idle except in its own rounds. */
  appNats: ChildProcess;
  appNatsUrl: string;
  /** A third, writing without the journal (MONGO_WRITE_CONCERN=w=majority,j=false). */
  appNoJournal: ChildProcess;
  appNoJournalUrl: string;
  /** A fourth, tracing on (10% sampled), exporting to `collector`; idle except in its rounds. */
  appTraced: ChildProcess;
  appTracedUrl: string;
  /** PRIVACY_BENCH_AGAINST: another build of privacy-api, tracing off and on. */
  against?: {
    off: Server & { child: ChildProcess };
    on: Server & { child: ChildProcess };
  };
  collector: CollectorStandIn;
  bare: ChildProcess;
  bareUrl: string;
  /** The floor with its status reads coalesced per turn as privacy-api's are (COALESCE=1). */
  bareCoalescing: ChildProcess;
  bareCoalescingUrl: string;
  issuer: TestIssuer;
  conn: Connection;
  /** The memory limit every server of the run has (docker-compose.yml's for privacy-api), if set. */
  memoryLimits: MemoryLimit[];
  /** The NODE_OPTIONS every server of the run has (docker-compose.yml's for privacy-api), if any. */
  nodeOptions: string | undefined;
}

async function startStack(): Promise<Stack> {
  // Checked before anything starts: a program that fails later in here leaves the others running.
  const againstBundle = process.env['PRIVACY_BENCH_AGAINST'];
  if (againstBundle !== undefined) {
    const path = resolve(againstBundle);
    if (!existsSync(path) || !path.startsWith(`${ROOT}/`)) {
      throw new Error(
        `PRIVACY_BENCH_AGAINST=${againstBundle}: no such bundle inside the repository (it needs its node_modules)`,
      );
    }
  }
  const workDir = join(ROOT, 'tmp', 'bench-privacy-api');
  await mkdir(workDir, { recursive: true });
  const pinning = cpuPinning();
  // This process (the load generator) and the database and NATS stay off the servers' CPU.
  if (pinning) pinProcess(pinning.clientCpus);
  const mongoPort = await freePort();
  // A data file, as in production: privacy-api's writes ask for the journal (j: true).
  const dataDir = join(workDir, 'mongo');
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true });
  const dataFile = join(dataDir, 'data');
  const mongoProcess = spawnProgram(
    [...serverNodeArgs(), '--port', String(mongoPort), '--data-file', dataFile],
    { LOG_LEVEL: 'warn' },
    pinning?.clientCpus,
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
  if (pinning && nats.pid !== undefined) pinProcess(pinning.clientCpus, nats.pid);
  const issuer = await createTestIssuer();
  const jwksFile = join(workDir, 'jwks.json');
  await writeFile(jwksFile, JSON.stringify(issuer.jwks));

  const appBundle = await bundleApp(
    join((await sourceRoot()).root, 'apps/privacy-api/src/main.ts'),
    join(workDir, 'main.js'),
  );
  // PRIVACY_BENCH_PROFILE=1 writes CPU profiles of privacy-api and of the bare server into
  // tmp/bench-privacy-api/ (privacy-api.cpuprofile, bare.cpuprofile, bare-coalescing.cpuprofile),
  // to compare what each spends.
  const profile = (name: string) =>
    process.env['PRIVACY_BENCH_PROFILE'] === '1'
      ? ['--cpu-prof', `--cpu-prof-dir=${workDir}`, `--cpu-prof-name=${name}.cpuprofile`]
      : [];
  // Every server (privacy-api and the floors) in a memory limit of its own, the one
  // docker-compose.yml gives privacy-api: V8 sizes its heap from it, as in the container.
  const memoryLimits: MemoryLimit[] = [];
  const limitBytes = deployedMemoryLimit('privacy-api');
  // And with the NODE_OPTIONS docker-compose.yml gives privacy-api beside its limit (V8's young
  // generation): both sides run the same runtime, configured as deployed.
  const nodeOptions = composeNodeOptions('privacy-api');
  const deployedNode: Record<string, string> =
    nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions };
  const limited = (name: string) => {
    const limit = memoryLimit(name, limitBytes);
    if (limit) memoryLimits.push(limit);
    return limit?.prefix;
  };
  const startApp = async (name: string, env: Record<string, string>, program = appBundle) => {
    const port = await freePort();
    // PRIVACY_BENCH_APP_FLAGS: extra node flags for the privacy-api processes (e.g. V8 heap sizing).
    const flags = (process.env['PRIVACY_BENCH_APP_FLAGS'] ?? '').split(' ').filter(Boolean);
    const child = spawnProgram(
      [...flags, ...profile(name), program],
      {
        ...privacyApiBenchEnv({
          mongoUrl,
          natsUrl: nats.url,
          port,
          issuer: issuer.issuer,
          jwksFile,
        }),
        PRIVACY_PAGE_SIZE: String(PAGE_SIZE),
        HTTP_TRUST_PROXY: TRUST_PROXY,
        ...deployedNode,
        // Tracing stays off unless `env` turns it on.
        ...env,
      },
      pinning?.serverCpu,
      limited(name),
    );
    const url = `http://127.0.0.1:${port}`;
    await waitForUrl(`${url}/health`, name);
    return { child, url };
  };
  const app = await startApp('privacy-api', {});
  const appNats = await startApp('privacy-api-nats', { PRIVACY_DPOP_REPLAY_STORE: 'nats' });
  const appNoJournal = await startApp('privacy-api-no-journal', {
    MONGO_WRITE_CONCERN: 'w=majority,j=false',
  });
  // Off the servers' CPU, like the load generator (it inherits this process's CPUs).
  const collector = await startCollectorStandIn();
  const appTraced = await startApp('privacy-api-traced', tracingOnEnv(collector.url));
  // PRIVACY_BENCH_AGAINST=<a bundle of privacy-api's main.ts> (e.g. tmp/bench-privacy-api/main.js
  // kept from a run of another commit): that build beside this one, tracing off and on, for the
  // "against" status rows (a change measured head to head, both at once on the one CPU).
  const startAgainst = async (name: string, env: Record<string, string>) => {
    const started = await startApp(name, env, resolve(againstBundle as string));
    return { url: started.url, pid: started.child.pid, child: started.child };
  };
  // PRIVACY_BENCH_AGAINST_SAMPLER_ARG: the sampling ratio of that build's traced instance (this
  // run's own bundle at 0, say, to measure what the sampled requests cost, head to head).
  const againstSamplerArg = process.env['PRIVACY_BENCH_AGAINST_SAMPLER_ARG'];
  const against = againstBundle
    ? {
        off: await startAgainst('privacy-api-against', {}),
        on: await startAgainst('privacy-api-against-traced', {
          ...tracingOnEnv(collector.url),
          ...(againstSamplerArg !== undefined
            ? { OTEL_TRACES_SAMPLER_ARG: againstSamplerArg }
            : {}),
        }),
      }
    : undefined;

  const bareFile = join(workDir, 'bare.js');
  await writeFile(bareFile, BARE_SERVER);
  const barePort = await freePort();
  const bare = spawnProgram(
    [...profile('bare'), bareFile],
    { MONGO_URL: mongoUrl, PORT: String(barePort), TRUST_PROXY, ...deployedNode },
    pinning?.serverCpu,
    limited('bare'),
  );
  const bareUrl = `http://127.0.0.1:${barePort}`;
  await waitForUrl(bareUrl, 'the bare server', true);
  const coalescingPort = await freePort();
  const bareCoalescing = spawnProgram(
    [...profile('bare-coalescing'), bareFile],
    {
      MONGO_URL: mongoUrl,
      PORT: String(coalescingPort),
      COALESCE: '1',
      VERIFY_DPOP: '1',
      TRUST_PROXY,
      ...deployedNode,
    },
    pinning?.serverCpu,
    limited('bare-coalescing'),
  );
  const bareCoalescingUrl = `http://127.0.0.1:${coalescingPort}`;
  await waitForUrl(bareCoalescingUrl, 'the coalescing bare server', true);

  return {
    workDir,
    pinning,
    mongoUrl,
    natsUrl: nats.url,
    mongoProcess,
    nats,
    app: app.child,
    appUrl: app.url,
    appNats: appNats.child,
    appNatsUrl: appNats.url,
    appNoJournal: appNoJournal.child,
    appNoJournalUrl: appNoJournal.url,
    appTraced: appTraced.child,
    appTracedUrl: appTraced.url,
    ...(against ? { against } : {}),
    collector,
    bare,
    bareUrl,
    bareCoalescing,
    bareCoalescingUrl,
    issuer,
    conn,
    memoryLimits,
    nodeOptions,
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
  const template = present(
    findTemplate('7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02'),
    'the reservasjon template',
  );
  const make = (replikering: boolean): Definition =>
    definitionFromTemplate(template, {
      definisjonGuid: randomUUID(),
      partKode,
      navn: 'Reservasjon',
      replikering,
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

/** The bodies and expectations of the citizens whose status is checked (half active). */
async function seedStatusCitizens(stack: Stack, definition: Definition) {
  const writer = await stack.issuer.bearer({ clientId: CLIENT, scopes: ['write'] });
  const citizens = Array.from({ length: STATUS_CITIZENS }, (_, i) => ({
    fnr: syntheticFnr(i),
    aktiv: i % 2 === 0,
  }));
  for (const c of citizens) {
    await setSetting(stack, writer, {
      innbyggerFnr: c.fnr,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
      aktiv: c.aktiv,
    });
  }
  return citizens.map((c) => ({
    ...c,
    body: JSON.stringify({
      innbyggerFnr: c.fnr,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    }),
  }));
}

type Citizen = Awaited<ReturnType<typeof seedStatusCitizens>>[number];

/** A status answer (privacy-api's setting view, or the bare server's document) for `expect`. */
function checkStatusAnswer(status: number, body: string, expect: Citizen): string | undefined {
  if (status !== 200) return `status ${status}: ${body.slice(0, 200)}`;
  try {
    const answer = JSON.parse(body) as { innbyggerFnr?: unknown; aktiv?: unknown };
    if (answer.innbyggerFnr !== expect.fnr || answer.aktiv !== expect.aktiv) {
      return `the answer is not the citizen's setting: ${body.slice(0, 200)}`;
    }
    return undefined;
  } catch {
    return `not JSON: ${body.slice(0, 200)}`;
  }
}

type AuthMode = 'dpop' | 'bearer';

/**
 * Status checks, issue 23's method (support/paired.ts): privacy-api and the bare server on one
 * CPU, driven at once with the same request bytes (the same Authorization and DPoP headers go to
 * the bare server, which ignores them), a random one of the citizens per request, every answer
 * checked. Each DPoP request carries a proof of its own: proofs are signed before each round, one
 * pool that both sides draw from in the same order.
 */
async function statusRounds(
  stack: Stack,
  app: Server,
  citizens: Citizen[],
  mode: AuthMode,
  rounds: number,
  /** What privacy-api is compared with: the bare server, or (bearer) another privacy-api. */
  floor: Server & { label: string } = { url: stack.bareUrl, pid: stack.bare?.pid, label: 'bare' },
) {
  const key = await stack.issuer.newDpopKey('ES256');
  const token =
    mode === 'dpop'
      ? await stack.issuer.mint({
          clientId: CLIENT,
          scopes: ['read'],
          dpopKey: key,
          expiresInSec: 3600,
        })
      : undefined;
  const bearer =
    mode === 'bearer'
      ? await stack.issuer.bearer({ clientId: CLIENT, scopes: ['read'], expiresInSec: 3600 })
      : undefined;
  let proofCount = 6000 * DURATION_S;

  async function round(n: number, durationS: number) {
    const proofs: string[] = [];
    if (token) {
      for (let i = 0; i < proofCount; i++) {
        proofs.push(
          await stack.issuer.dpopProof({
            key,
            method: 'POST',
            url: `https://${PUBLIC_HOST}${STATUS_PATH}`,
            accessToken: token,
          }),
        );
      }
    }
    const picks = Array.from({ length: 1 << 16 }, () =>
      Math.floor(Math.random() * citizens.length),
    );
    const side = (label: string, url: string, pid: number | undefined): Side<Citizen> => ({
      label,
      url,
      pid,
      next(i) {
        const citizen = citizens[picks[i % picks.length] as number] as Citizen;
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          ...FORWARDED,
        };
        if (token) {
          const proof = proofs[i];
          // Never reuse a proof: privacy-api would rightly refuse the replay.
          if (proof === undefined) throw new Error(`more than ${proofCount} requests in a round`);
          headers['authorization'] = `DPoP ${token}`;
          headers['dpop'] = proof;
        } else if (bearer) {
          headers['authorization'] = bearer;
        }
        return {
          request: { method: 'POST', path: STATUS_PATH, headers, body: citizen.body },
          expect: citizen,
        };
      },
      check: checkStatusAnswer,
    });
    const [a, b] = await driveTogether(
      [side('privacy-api', app.url, app.pid), side(floor.label, floor.url, floor.pid)],
      { connections: CONNECTIONS, durationS, round: n },
    );
    // Enough proofs for the next round, whatever this machine manages.
    proofCount = Math.max(
      proofCount,
      Math.ceil(((a as SideResult).answers / durationS) * DURATION_S * 1.5),
    );
    return { app: a as SideResult, bare: b as SideResult };
  }

  await round(0, 2); // warm-up: JIT, caches, connection pools
  const results = [];
  for (let n = 1; n <= rounds; n++) results.push(await round(n, DURATION_S));
  return summariseRounds(results);
}

/** The ratio's context: whether the servers saturated their CPU, and the cost ratio by CPU. */
function reportCpu(r: { appCpuUs: number; bareCpuUs: number; cpuShare: number }): void {
  say(
    `    servers' share of their CPU ${r.cpuShare.toFixed(2)}${r.cpuShare < 0.9 ? ' (not saturated: the ratio flatters; see the bench README)' : ''}; CPU per request, floor / privacy-api ${(r.bareCpuUs / r.appCpuUs).toFixed(2)}`,
  );
}

function reportRounds(label: string, r: Awaited<ReturnType<typeof statusRounds>>, target?: number) {
  say(
    `  ${label}: privacy-api ${r.appRate.toFixed(0)} req/s (${r.appCpuUs.toFixed(0)} us CPU/req), bare ${r.bareRate.toFixed(0)} req/s (${r.bareCpuUs.toFixed(0)} us CPU/req)`,
  );
  say(`    ratios of the rounds: ${r.ratios.map((x) => x.toFixed(2)).join(' ')}`);
  say(
    `    CPU per request of the rounds, privacy-api/floor (us): ${r.cpuUsOfRounds.map(([a, b]) => `${a.toFixed(0)}/${b.toFixed(0)}`).join(' ')}`,
  );
  reportCpu(r);
  say(
    `    ratio (median) ${target === undefined ? r.ratio.toFixed(2) + ' (printed, no target)' : verdict(r.ratio, '>=', target)}`,
  );
}

type SetSide = Side<{ fnr: string; aktiv: boolean }> & { resync(): Promise<void> };

/**
 * A side of the set rounds: each request flips the `aktiv` of a citizen that has no request in
 * flight (round robin over the citizens, skipping busy ones), so that every request is a change and
 * no two requests race on one setting. `collection` is where this side's settings live: before each
 * round the side reads its citizens' state from it, so that a request still in flight when the last
 * round ended cannot turn the next one into a repeat.
 */
function setSide(
  stack: Stack,
  label: string,
  server: Server,
  citizens: Citizen[],
  definition: Definition,
  writer: string,
  collection: string,
): SetSide {
  const state = new Map(citizens.map((c) => [c.fnr, c.aktiv]));
  const inFlight = new Set<string>();
  let cursor = 0;
  const floor = collection === FLOOR_SETTINGS_COLLECTION;
  return {
    label,
    url: server.url,
    pid: server.pid,
    async resync() {
      // Requests of the last round may still be under way in the server: wait until two reads
      // half a second apart agree.
      const read = async () =>
        JSON.stringify(
          await stack.conn
            .collection<{ innbyggerFnr: string; aktiv: boolean }>(collection)
            .find(
              { definisjonGuid: definition.definisjonGuid },
              { projection: { _id: 0, innbyggerFnr: 1, aktiv: 1 }, sort: { innbyggerFnr: 1 } },
            )
            .toArray(),
        );
      let before = await read();
      for (let i = 0; i < 40; i++) {
        await sleep(500);
        const after = await read();
        if (after === before) break;
        before = after;
      }
      for (const doc of JSON.parse(before) as Array<{ innbyggerFnr: string; aktiv: boolean }>) {
        if (state.has(doc.innbyggerFnr)) state.set(doc.innbyggerFnr, doc.aktiv);
      }
      inFlight.clear();
    },
    next() {
      // At most CONNECTIONS requests are in flight, far fewer than the citizens: this ends quickly.
      let citizen = citizens[cursor++ % citizens.length] as Citizen;
      while (inFlight.has(citizen.fnr)) citizen = citizens[cursor++ % citizens.length] as Citizen;
      inFlight.add(citizen.fnr);
      const aktiv = !(state.get(citizen.fnr) as boolean);
      state.set(citizen.fnr, aktiv);
      const body = JSON.stringify({
        innbyggerFnr: citizen.fnr,
        definisjonGuid: definition.definisjonGuid,
        partKode: definition.partKode,
        aktiv,
      });
      return {
        request: {
          method: 'POST',
          path: SET_PATH,
          headers: { 'content-type': 'application/json', authorization: writer, ...FORWARDED },
          body,
        },
        expect: { fnr: citizen.fnr, aktiv },
      };
    },
    check(status, body, expect) {
      inFlight.delete(expect.fnr);
      if (status !== 200) return `status ${status}: ${body.slice(0, 200)}`;
      if (floor) {
        const doc = JSON.parse(body) as { aktiv?: unknown };
        return doc.aktiv === expect.aktiv ? undefined : `not applied: ${body.slice(0, 200)}`;
      }
      return body === '{"returKode":"ok","instansEndret":"endret"}'
        ? undefined
        : `not endret: ${body.slice(0, 200)}`;
    },
  };
}

/** SET_ROUNDS paired rounds of two set sides (after a warm-up), medians. */
async function pairedSetRounds(a: SetSide, b: SetSide) {
  const results = [];
  for (let n = 0; n <= SET_ROUNDS; n++) {
    await Promise.all([a.resync(), b.resync()]);
    const [x, y] = await driveTogether([a, b], {
      connections: CONNECTIONS,
      durationS: n === 0 ? 2 : DURATION_S,
      round: n,
    });
    if (n > 0) results.push({ app: x as SideResult, bare: y as SideResult });
  }
  return summariseRounds(results);
}

/**
 * Sets that each change the setting (`endret`) against the floor's findOneAndUpdate with the
 * journaled write concern, on a copy of the same documents (so that neither side's writes turn the
 * other's into repeats), both with the same request bytes.
 */
async function setsAgainstFloor(stack: Stack, citizens: Citizen[], definition: Definition) {
  const writer = await stack.issuer.bearer({
    clientId: CLIENT,
    scopes: ['write'],
    expiresInSec: 3600,
  });
  const docs = await stack.conn
    .collection(SETTINGS_COLLECTION)
    .find({ definisjonGuid: definition.definisjonGuid })
    .toArray();
  await stack.conn.collection(FLOOR_SETTINGS_COLLECTION).deleteMany({});
  await stack.conn.collection(FLOOR_SETTINGS_COLLECTION).insertMany(docs);
  return pairedSetRounds(
    setSide(
      stack,
      'privacy-api',
      { url: stack.appUrl, pid: stack.app.pid },
      citizens,
      definition,
      writer,
      SETTINGS_COLLECTION,
    ),
    setSide(
      stack,
      'bare',
      { url: stack.bareUrl, pid: stack.bare.pid },
      citizens,
      definition,
      writer,
      FLOOR_SETTINGS_COLLECTION,
    ),
  );
}

/**
 * What the journal costs a set: privacy-api with the default write concern (majority, j: true)
 * against a second privacy-api that writes without j, on the same CPU at once; each instance sets
 * its own half of the citizens. Group commit is what keeps this near 1 (issue 18: >= 0.6).
 */
async function journalCost(stack: Stack, citizens: Citizen[], definition: Definition) {
  const writer = await stack.issuer.bearer({
    clientId: CLIENT,
    scopes: ['write'],
    expiresInSec: 3600,
  });
  return pairedSetRounds(
    setSide(
      stack,
      'privacy-api (j: true)',
      { url: stack.appUrl, pid: stack.app.pid },
      citizens.filter((_, i) => i % 2 === 0),
      definition,
      writer,
      SETTINGS_COLLECTION,
    ),
    setSide(
      stack,
      'privacy-api (j: false)',
      { url: stack.appNoJournalUrl, pid: stack.appNoJournal.pid },
      citizens.filter((_, i) => i % 2 === 1),
      definition,
      writer,
      SETTINGS_COLLECTION,
    ),
  );
}

/** Resets a process's peak RSS (VmHWM) to its current RSS; false where Linux does not let us. */
function resetPeakRss(pid: number | undefined): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * UPLOADERS clients each set a setting with a 4 MiB proof (5.6 MB of JSON), again and again for
 * UPLOAD_SECONDS, while a bearer status load runs; privacy-api's peak RSS meanwhile. Every upload
 * must be answered endret, every status check right.
 */
async function proofUploads(stack: Stack, citizens: Citizen[], definition: Definition) {
  const writer = await stack.issuer.bearer({
    clientId: CLIENT,
    scopes: ['write'],
    expiresInSec: 3600,
  });
  const reader = await stack.issuer.bearer({
    clientId: CLIENT,
    scopes: ['read'],
    expiresInSec: 3600,
  });
  const png = randomBytes(PROOF_BYTES);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
  const content = png.toString('base64');
  const pid = stack.app.pid;
  const peakResettable = resetPeakRss(pid);
  let sampled = rssOf(pid).rss;
  const sampler = setInterval(() => (sampled = Math.max(sampled, rssOf(pid).rss)), 10);
  const deadline = Date.now() + UPLOAD_SECONDS * 1000;
  let uploads = 0;
  const uploader = async (u: number) => {
    const fnr = syntheticFnr(9_000_000 + u);
    for (let aktiv = true; Date.now() < deadline; aktiv = !aktiv) {
      const res = await fetch(`${stack.appUrl}${SET_PATH}`, {
        method: 'POST',
        headers: { authorization: writer, 'content-type': 'application/json' },
        body: JSON.stringify({
          innbyggerFnr: fnr,
          definisjonGuid: definition.definisjonGuid,
          partKode: definition.partKode,
          aktiv,
          signertBevisMimeType: 'image/png',
          signertBevisInnhold: content,
        }),
      });
      const text = await res.text();
      if (res.status !== 200 || !text.includes('"endret"')) {
        throw new Error(`an upload answered ${res.status}: ${text.slice(0, 200)}`);
      }
      uploads++;
    }
  };
  const statusLoad: Side<Citizen> = {
    label: 'privacy-api (status load)',
    url: stack.appUrl,
    pid,
    next() {
      const citizen = citizens[Math.floor(Math.random() * citizens.length)] as Citizen;
      return {
        request: {
          method: 'POST',
          path: STATUS_PATH,
          headers: { 'content-type': 'application/json', authorization: reader, ...FORWARDED },
          body: citizen.body,
        },
        expect: citizen,
      };
    },
    check: checkStatusAnswer,
  };
  try {
    const [status] = await Promise.all([
      driveTogether([statusLoad], { connections: CONNECTIONS, durationS: UPLOAD_SECONDS }),
      ...Array.from({ length: UPLOADERS }, (_, u) => uploader(u)),
    ]);
    const peak = peakResettable ? Math.max(rssOf(pid).peak, sampled) : sampled;
    return { uploads, peak, statusRate: (status[0] as SideResult).rate, peakResettable };
  } finally {
    clearInterval(sampler);
  }
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
  const startRss = rssOf(stack.app.pid).rss;
  let peakRss = startRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(stack.app.pid).rss)), 25);
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
  return { pages: times.length, entries, first, last, startRss, peakRss };
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
    // PRIVACY_BENCH_STATUS=dpop,bearer,coalescing,dpop-coalescing,nats,traced,onoff runs some of the status rows (profiling
    // one kind of request: PRIVACY_BENCH_PROFILE's privacy-api profile then holds only it).
    const onlyStatus = process.env['PRIVACY_BENCH_STATUS']?.split(',');
    const wantStatus = (row: string) => !onlyStatus || onlyStatus.includes(row);
    let dpop: Awaited<ReturnType<typeof statusRounds>> | undefined;

    say(`  ${describePinning(stack.pinning)}`);
    say(
      stack.memoryLimits.length > 0
        ? `  each server in a ${stack.memoryLimits[0]?.describe.replace(/ \(.*/, '')} (docker-compose.yml's mem_limit for privacy-api; V8 sizes its heap from it)`
        : `  NO memory limit (cgroups not writable here): V8 sizes each server's heap from the machine's memory, so the RSS rows measure the machine`,
    );
    say(
      stack.nodeOptions === undefined
        ? `  no NODE_OPTIONS (docker-compose.yml sets none for privacy-api)`
        : `  each server with NODE_OPTIONS=${stack.nodeOptions} (docker-compose.yml's for privacy-api)`,
    );
    say(
      `  privacy-api built from the ${(await sourceRoot()).label}, on Node ${process.versions.node}; HTTP_TRUST_PROXY=${TRUST_PROXY}, every request with X-Forwarded-Proto/Host/For`,
    );
    const statusApp: Server = { url: stack.appUrl, pid: stack.app.pid };
    let citizens: Citizen[] | undefined;
    const statusCitizens = async () => (citizens ??= await seedStatusCitizens(stack, status));

    if (want('status')) {
      const seeded = await statusCitizens();
      say(
        `status checks: ${seeded.length} citizens, ${CONNECTIONS} connections to each server, ${ROUNDS} rounds of ${DURATION_S} s, both at once on one CPU`,
      );
      const idleRss = rssOf(stack.app.pid).rss;
      dpop = wantStatus('dpop')
        ? await statusRounds(stack, statusApp, seeded, 'dpop', ROUNDS)
        : undefined;
      if (dpop) reportRounds('DPoP-bound token, a proof per request', dpop, TARGETS.dpopRatio);
      if (wantStatus('bearer')) {
        const bearer = await statusRounds(stack, statusApp, seeded, 'bearer', ROUNDS);
        reportRounds('bearer token', bearer, TARGETS.bearerRatio);
      }
      // privacy-api coalesces the reads of one turn; the floor above does not (issue 23 defines
      // it with one findOne a request). Against the floor coalescing as privacy-api does (and, for
      // DPoP, checking the proof's signature, the one cost a DPoP check cannot avoid), the ratio
      // is privacy-api's own cost beside the driver (issue 33).
      const coalescingFloor = {
        url: stack.bareCoalescingUrl,
        pid: stack.bareCoalescing.pid,
        label: 'bare, coalescing',
      };
      if (wantStatus('coalescing')) {
        const coalescing = await statusRounds(
          stack,
          statusApp,
          seeded,
          'bearer',
          ROUNDS,
          coalescingFloor,
        );
        reportRounds(
          'bearer token, against a floor coalescing its reads the same way',
          coalescing,
          TARGETS.bearerCoalescingRatio,
        );
      }
      if (wantStatus('dpop-coalescing')) {
        const coalescing = await statusRounds(
          stack,
          statusApp,
          seeded,
          'dpop',
          ROUNDS,
          coalescingFloor,
        );
        reportRounds(
          'DPoP, against a floor coalescing its reads the same way and checking the proof’s ES256 signature',
          coalescing,
          TARGETS.dpopCoalescingRatio,
        );
      }
      if (dpop && wantStatus('bearer')) {
        const afterRss = rssOf(stack.app.pid).rss;
        say(
          `  privacy-api RSS: idle ${idleRss.toFixed(0)} MB; after ${2 * ROUNDS * DURATION_S} s of status checks ${verdict(afterRss, '<=', TARGETS.statusRssMb, { digits: 0, unit: 'MB' })}`,
        );
      }
    }
    if (want('status') && wantStatus('nats')) {
      const seeded = await statusCitizens();
      const natsStore = await statusRounds(
        stack,
        { url: stack.appNatsUrl, pid: stack.appNats.pid },
        seeded,
        'dpop',
        Math.min(ROUNDS, 3),
      );
      reportRounds('DPoP, replay store in NATS (PRIVACY_DPOP_REPLAY_STORE=nats)', natsStore);
    }
    if (want('status') && wantStatus('traced')) {
      const seeded = await statusCitizens();
      const traced = await statusRounds(
        stack,
        { url: stack.appTracedUrl, pid: stack.appTraced.pid },
        seeded,
        'dpop',
        ROUNDS,
      );
      reportRounds('DPoP, tracing on (10% sampled, OTLP to a local stand-in)', traced);
      if (dpop) {
        say(
          `    DPoP ratio with tracing on / off ${(traced.ratio / dpop.ratio).toFixed(2)} (each against the floor in its own rounds; printed)`,
        );
      }
    }
    if (want('status') && wantStatus('onoff')) {
      const seeded = await statusCitizens();
      // The cost alone: privacy-api with tracing on against itself with it off, at once on the one
      // CPU (bearer: a DPoP proof names one server's URL, so the two cannot share proofs).
      const onOff = await statusRounds(
        stack,
        { url: stack.appTracedUrl, pid: stack.appTraced.pid },
        seeded,
        'bearer',
        ROUNDS,
        { url: stack.appUrl, pid: stack.app.pid, label: 'tracing off' },
      );
      const exported = await stack.collector.received();
      say(
        `  tracing on (${exported.exports} exports, ${(exported.bytes / 1024).toFixed(0)} KiB received) against tracing off, bearer, at once: ${onOff.appRate.toFixed(0)} vs ${onOff.bareRate.toFixed(0)} req/s (${onOff.appCpuUs.toFixed(0)} vs ${onOff.bareCpuUs.toFixed(0)} us CPU/req)`,
      );
      say(`    ratios of the rounds: ${onOff.ratios.map((x) => x.toFixed(2)).join(' ')}`);
      say(`    tracing on / off (median) ${verdict(onOff.ratio, '>=', TARGETS.tracingOnOverOff)}`);
    }
    if (want('status') && stack.against) {
      const seeded = await statusCitizens();
      const rows = [
        ['tracing off', statusApp, stack.against.off],
        ['tracing on', { url: stack.appTracedUrl, pid: stack.appTraced.pid }, stack.against.on],
      ] as const;
      for (const [label, app, other] of rows) {
        const r = await statusRounds(stack, app, seeded, 'bearer', ROUNDS, {
          ...other,
          label: 'against',
        });
        say(
          `  this build against ${againstBundleName()}, ${label}, bearer, at once: ${r.appRate.toFixed(0)} vs ${r.bareRate.toFixed(0)} req/s (${r.appCpuUs.toFixed(0)} vs ${r.bareCpuUs.toFixed(0)} us CPU/req)`,
        );
        say(`    ratios of the rounds: ${r.ratios.map((x) => x.toFixed(2)).join(' ')}`);
        say(`    this build / that one (median) ${r.ratio.toFixed(2)} (printed)`);
      }
    }
    if (want('status')) {
      // The machine may be shared: req/s depends on what else runs, so the run says how busy it was.
      say(
        `  load average: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
    }

    if (want('uploads')) {
      say(
        `proof uploads: ${UPLOADERS} clients sending 4 MiB proofs for ${UPLOAD_SECONDS} s under a status load`,
      );
      const u = await proofUploads(stack, await statusCitizens(), status);
      say(
        `  ${u.uploads} uploads (all endret), status load ${u.statusRate.toFixed(0)} req/s; peak RSS of privacy-api ${verdict(u.peak, '<=', TARGETS.uploadPeakRssMb, { digits: 0, unit: 'MB' })}${u.peakResettable ? '' : ' (sampled every 10 ms: VmHWM could not be reset)'}`,
      );
    }

    if (want('sets')) {
      const seeded = await statusCitizens();
      say(
        `sets (every one endret): ${CONNECTIONS} connections to each server, ${SET_ROUNDS} rounds of ${DURATION_S} s, both at once on one CPU`,
      );
      const sets = await setsAgainstFloor(stack, seeded, status);
      say(
        `  privacy-api ${sets.appRate.toFixed(0)} sets/s (${sets.appCpuUs.toFixed(0)} us CPU/set), bare findOneAndUpdate with j ${sets.bareRate.toFixed(0)}/s (${sets.bareCpuUs.toFixed(0)} us CPU)`,
      );
      say(`    ratios of the rounds: ${sets.ratios.map((x) => x.toFixed(2)).join(' ')}`);
      reportCpu(sets);
      say(`    ratio (median) ${verdict(sets.ratio, '>=', TARGETS.setRatio)}`);
      const journal = await journalCost(stack, seeded, status);
      say(
        `  with the journal (j: true) ${journal.appRate.toFixed(0)} sets/s, without ${journal.bareRate.toFixed(0)} sets/s, each on half the citizens`,
      );
      say(`    ratios of the rounds: ${journal.ratios.map((x) => x.toFixed(2)).join(' ')}`);
      say(`    ratio (median) ${verdict(journal.ratio, '>=', TARGETS.journalRatio)}`);
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
        `  peak RSS of privacy-api during the walk ${verdict(w.peakRss, '<=', TARGETS.rssMb, { digits: 0, unit: 'MB' })} (${w.startRss.toFixed(0)} MB as it began)`,
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
    await stopProgram(stack.app);
    await stopProgram(stack.appNats);
    await stopProgram(stack.appNoJournal);
    await stopProgram(stack.appTraced);
    if (stack.against) {
      await stopProgram(stack.against.off.child);
      await stopProgram(stack.against.on.child);
    }
    stack.collector.stop();
    await stopProgram(stack.bare);
    await stopProgram(stack.bareCoalescing);
    await stopProgram(stack.mongoProcess);
    await stack.nats.dispose();
    await rm(join(stack.workDir, 'jwks.json'), { force: true });
    await rm(join(stack.workDir, 'mongo'), { recursive: true, force: true });
    for (const limit of stack.memoryLimits) limit.dispose();
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
