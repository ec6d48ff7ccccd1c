// Benchmark of privacy-api under hostile, unauthenticated load (issue 34, "What to reach"): a
// client's status checks at a fixed rate (50/s, open loop), first alone (the baseline, measured in
// the same run), then under each attack in turn: 10 gzip bombs a second without a token (6 KB on
// the wire inflating to 6 MB of nested brackets, to the set operation, whose body limit is 6 MiB);
// 20 connections that each start a chunked POST to the same operation, send 5 bytes and go silent
// (reopened when the server closes them); both at once. Printed per attack: the status check's p99
// over its p99 alone (target <= 2) and privacy-api's peak RSS over its median RSS alone (target
// <= +50 MB); what the attacker got back, by status; and a legitimate gzip set with a token sent
// once a second (it must be served, not made to wait for a large-body place). Every status answer
// is checked (200, the citizen's setting).
//
// privacy-api runs as production runs it (the esbuild bundle of main.ts under plain node,
// NODE_ENV=production), pinned to one CPU with taskset; this process (the client and the
// attacker), the MongoDB-compatible server and NATS run on the others. Bounded in time: four
// phases of PRIVACY_HOSTILE_SECONDS (default 10) after a 3 s warm-up; a phase ends when its last
// status check is answered.
//
// Run: npm run bench -- privacy-hostile
// PRIVACY_HOSTILE_ENTRY=<path to a privacy-api main.ts>: measure that source instead (e.g. another
// worktree's, to compare with the code before a change; bundled here, with this repo's packages).
import type { ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { createTestIssuer, syntheticFnr } from '@nhp/privacy-testing';
import { freePort, startNatsServer, withDatabase } from '@nhp/shared-testing';
import { cpuPinning, describePinning, pinProcess, rssOf } from './support/paired';
import { bundleApp, privacyApiBenchEnv, ROOT } from './support/programs';
import { serverNodeArgs } from '@nhp/mongo-server';
import { spawnProgram, stopProgram, waitForUrl } from './support/processes';

const PHASE_S = Math.max(3, Number(process.env['PRIVACY_HOSTILE_SECONDS'] ?? 10) || 10);
const WARMUP_S = 3;
/** The legitimate client's status checks a second (open loop: sent on time, whatever answers). */
const STATUS_RATE = 50;
const BOMBS_PER_S = 10;
const STALLED = 20;
const CITIZENS = 200;
const TARGETS = { p99Ratio: 2, rssDeltaMb: 50 };
const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
const SET_PATH = '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2';
const SAMTYKKE_TEMPLATE = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01';

const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};
const median = (values: number[]) => percentile(values, 50);

/** A POST answered as { status, text }; a failed connection rejects. */
function postTo(
  url: string,
  headers: Record<string, string>,
  body: string | Buffer,
  agent?: Agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolvePost, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, agent: agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolvePost({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** 6 MB of nested brackets under the 6 MiB limit, about 6 KB gzipped. */
function bomb(): Buffer {
  const depth = 3_100_000;
  return gzipSync(Buffer.from(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`), { level: 9 });
}

/** Answers the attacker got, by status ("error" for a connection that failed or was reset). */
type Tally = Map<string, number>;
const count = (tally: Tally, key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);
const describeTally = (tally: Tally) =>
  [...tally.entries()].map(([k, v]) => `${k}: ${v}`).join(', ') || 'none';

/** 20 connections that each send a POST's head and 5 bytes of a chunked body, then nothing. */
function stallers(port: number, tally: Tally) {
  let running = true;
  const sockets = new Set<Socket>();
  const open = () => {
    if (!running) return;
    const socket = netConnect(port, '127.0.0.1');
    sockets.add(socket);
    let answered = false;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (answered) return;
      answered = true;
      count(tally, /^HTTP\/1\.1 (\d{3})/.exec(chunk)?.[1] ?? 'other');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      if (!answered) count(tally, 'closed');
      // A new one at once, as an attacker would: the pressure never lets up.
      setTimeout(open, 10);
    });
    socket.write(
      `POST ${SET_PATH} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n`,
    );
  };
  for (let i = 0; i < STALLED; i++) open();
  return {
    stop() {
      running = false;
      for (const socket of sockets) socket.destroy();
    },
  };
}

interface Phase {
  latencies: number[];
  wrong: string[];
  rss: number[];
}

/**
 * Status checks at STATUS_RATE a second for `seconds`, each answer checked; privacy-api's RSS
 * sampled every 100 ms.
 */
async function statusPhase(
  url: string,
  pid: number | undefined,
  auth: string,
  bodies: Array<{ body: string; fnr: string; aktiv: boolean }>,
  seconds: number,
  agent: Agent,
): Promise<Phase> {
  const phase: Phase = { latencies: [], wrong: [], rss: [] };
  const sampler = setInterval(() => phase.rss.push(rssOf(pid).rss), 100);
  const pending: Array<Promise<void>> = [];
  const started = now();
  const total = Math.round(seconds * STATUS_RATE);
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / STATUS_RATE;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    const citizen = bodies[i % bodies.length] as (typeof bodies)[number];
    const sent = now();
    pending.push(
      postTo(
        `${url}${STATUS_PATH}`,
        { authorization: auth, 'content-type': 'application/json' },
        citizen.body,
        agent,
      )
        .then(({ status, text }) => {
          phase.latencies.push(now() - sent);
          const answer = status === 200 ? (JSON.parse(text) as { aktiv?: unknown }) : {};
          if (status !== 200 || answer.aktiv !== citizen.aktiv) {
            phase.wrong.push(`${status} ${text.slice(0, 120)}`);
          }
        })
        .catch((err: unknown) => {
          phase.wrong.push(String(err));
        }),
    );
  }
  await Promise.all(pending);
  clearInterval(sampler);
  return phase;
}

export async function run(): Promise<void> {
  const workDir = join(ROOT, 'tmp', 'bench-privacy-hostile');
  await rm(workDir, { recursive: true, force: true });
  await mkdir(join(workDir, 'mongo'), { recursive: true });
  const pinning = cpuPinning();
  if (pinning) pinProcess(pinning.clientCpus);
  const children: ChildProcess[] = [];
  let nats: { dispose(): Promise<void>; url: string; pid?: number } | undefined;
  try {
    const mongoPort = await freePort();
    children.push(
      spawnProgram(
        [
          ...serverNodeArgs(),
          '--port',
          String(mongoPort),
          '--data-file',
          join(workDir, 'mongo', 'data'),
        ],
        { LOG_LEVEL: 'warn' },
        pinning?.clientCpus,
      ),
    );
    const mongoUrl = withDatabase(`mongodb://127.0.0.1:${mongoPort}`, 'bench_hostile');
    nats = await startNatsServer();
    if (pinning && nats.pid !== undefined) pinProcess(pinning.clientCpus, nats.pid);
    const issuer = await createTestIssuer();
    const jwksFile = join(workDir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify(issuer.jwks));
    const entry = resolve(process.env['PRIVACY_HOSTILE_ENTRY'] ?? 'apps/privacy-api/src/main.ts');
    const bundle = await bundleApp(entry, join(workDir, 'main.js'));
    const port = await freePort();
    const app = spawnProgram(
      [bundle],
      privacyApiBenchEnv({ mongoUrl, natsUrl: nats.url, port, issuer: issuer.issuer, jwksFile }),
      pinning?.serverCpu,
    );
    children.push(app);
    const url = `http://127.0.0.1:${port}`;
    await waitForUrl(`${url}/health`, 'privacy-api');

    // A party and a definition through the API (an admin token needs no grant), then citizens.
    const admin = await issuer.bearer({ clientId: 'bench-hostile', scopes: ['admin'] });
    const partKode = `hostile-${randomUUID().slice(0, 8)}`;
    const definisjonGuid = randomUUID();
    const post = async (path: string, body: unknown, expected: number) => {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: admin, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== expected) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    await post('/part/v1', { partKode, navn: 'Bench' }, 201);
    await post(
      '/innstillingdefinisjon/v1',
      { definisjonMalGuid: SAMTYKKE_TEMPLATE, definisjonGuid, partKode, navn: 'Bench' },
      201,
    );
    const citizens = Array.from({ length: CITIZENS }, (_, i) => ({
      fnr: syntheticFnr(80_000 + i),
      aktiv: i % 2 === 0,
    }));
    for (const c of citizens) {
      await post(
        SET_PATH,
        { innbyggerFnr: c.fnr, definisjonGuid, partKode, typePi: 'samtykke', aktiv: c.aktiv },
        200,
      );
    }
    const bodies = citizens.map((c) => ({
      ...c,
      body: JSON.stringify({ innbyggerFnr: c.fnr, definisjonGuid, partKode }),
    }));
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const pid = app.pid;

    say(
      `${describePinning(pinning)}; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    say(`source: ${entry}`);
    await statusPhase(url, pid, admin, bodies, WARMUP_S, agent);
    const idle = await statusPhase(url, pid, admin, bodies, PHASE_S, agent);
    const idleP99 = percentile(idle.latencies, 99);
    const idleRss = median(idle.rss);
    say(
      `alone: status check p50 ${percentile(idle.latencies, 50).toFixed(1)} ms, p99 ${idleP99.toFixed(1)} ms; RSS ${idleRss.toFixed(0)} MB (median)`,
    );
    const wrong = [...idle.wrong];
    const payload = bomb();
    // A legitimate large set (gzip, with a token) once a second: what the stalled connections
    // must not keep waiting.
    const setBody = gzipSync(
      JSON.stringify({
        innbyggerFnr: citizens[0]?.fnr,
        definisjonGuid,
        partKode,
        typePi: 'samtykke',
        aktiv: true,
      }),
    );

    for (const attack of ['bombs', 'stalled', 'both'] as const) {
      const bombTally: Tally = new Map();
      const stallTally: Tally = new Map();
      const setTally: Tally = new Map();
      const setLatencies: number[] = [];
      const inFlight: Array<Promise<void>> = [];
      const bomber =
        attack === 'stalled'
          ? undefined
          : setInterval(() => {
              inFlight.push(
                postTo(
                  `${url}${SET_PATH}`,
                  { 'content-type': 'application/json', 'content-encoding': 'gzip' },
                  payload,
                )
                  .then(({ status }) => void count(bombTally, String(status)))
                  .catch(() => void count(bombTally, 'error')),
              );
            }, 1000 / BOMBS_PER_S);
      const stalled = attack === 'bombs' ? undefined : stallers(port, stallTally);
      const setter = setInterval(() => {
        const sent = now();
        inFlight.push(
          postTo(
            `${url}${SET_PATH}`,
            {
              authorization: admin,
              'content-type': 'application/json',
              'content-encoding': 'gzip',
            },
            setBody,
          )
            .then(({ status }) => {
              setLatencies.push(now() - sent);
              count(setTally, String(status));
            })
            .catch(() => void count(setTally, 'error')),
        );
      }, 1000);
      const phase = await statusPhase(url, pid, admin, bodies, PHASE_S, agent);
      clearInterval(bomber);
      clearInterval(setter);
      stalled?.stop();
      await Promise.all(inFlight);
      wrong.push(...phase.wrong);
      const p99 = percentile(phase.latencies, 99);
      const peak = Math.max(...phase.rss);
      const ratio = p99 / idleP99;
      const delta = peak - idleRss;
      const what =
        attack === 'bombs'
          ? `${BOMBS_PER_S} gzip bombs/s without a token`
          : attack === 'stalled'
            ? `${STALLED} stalled connections`
            : 'both';
      say(`under ${what}:`);
      say(
        `  status check p50 ${percentile(phase.latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms: p99 / alone ${ratio.toFixed(2)} (target <= ${TARGETS.p99Ratio}) ${ratio <= TARGETS.p99Ratio ? 'PASS' : 'FAIL'}`,
      );
      say(
        `  RSS peak ${peak.toFixed(0)} MB: +${delta.toFixed(0)} MB over alone (target <= +${TARGETS.rssDeltaMb}) ${delta <= TARGETS.rssDeltaMb ? 'PASS' : 'FAIL'}`,
      );
      if (bomber)
        say(`  bombs (${payload.length} bytes each) answered ${describeTally(bombTally)}`);
      if (stalled) say(`  stalled connections answered ${describeTally(stallTally)}`);
      say(
        `  a client's gzip set once a second answered ${describeTally(setTally)}, slowest ${Math.max(0, ...setLatencies).toFixed(0)} ms`,
      );
    }
    agent.destroy();
    if (wrong.length > 0) {
      say(`FAIL: ${wrong.length} status answers wrong, e.g. ${wrong.slice(0, 3).join(' | ')}`);
    } else {
      say('every status answer checked: right');
    }
  } finally {
    for (const child of children.reverse()) await stopProgram(child);
    await nats?.dispose();
  }
}
