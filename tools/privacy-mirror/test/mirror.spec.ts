/**
 * The mirror against real processes (privacy-api, nats-server, the development issuer, the
 * MongoDB-compatible server): 2,000 random changes across 200 citizens and two definitions, the
 * mirror stopped during a third of them and the NATS server restarted once. Afterwards the copy
 * equals a fresh walk exactly.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createPrivacyClient, type PrivacyClient } from '@nhp/privacy-client';
import { PRIVACY_EVENTS_STREAM, settingChangedSubject } from '@nhp/privacy-contracts';
import { startPrivacyStack, type PrivacyStack } from '@nhp/privacy-dev-issuer';
import { syntheticFnr } from '@nhp/privacy-testing';
import { writeDevStack } from '@nhp/shared-config';
import { freePort, waitFor } from '@nhp/shared-testing';
import { JsonFileMirrorStore, runPrivacyMirror, type MirrorRunSummary } from '../src';

const SAMTYKKE = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01';
const RESERVASJON = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02';
const CITIZENS = 200;
const CHANGES = 2000;

let stack: PrivacyStack;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'privacy-mirror-'));
  // Pages of 50: the walks follow the cursor.
  stack = await startPrivacyStack({ apiEnv: { PRIVACY_PAGE_SIZE: '50' } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function clientFor(scopes: Array<'read' | 'write' | 'admin'>): Promise<{
  client: PrivacyClient;
  clientId: string;
}> {
  const clientId = `client-${randomUUID()}`;
  const { privateJwk } = await stack.register({ clientId, scopes });
  return {
    clientId,
    client: createPrivacyClient({
      baseUrl: stack.apiUrl,
      auth: { issuer: stack.issuerUrl, clientId, privateKey: privateJwk, scopes },
    }),
  };
}

/** A new party with one replicated consent definition, and an admin client. */
async function partWithConsent(prefix: string, navn?: string) {
  const { client: admin } = await clientFor(['admin']);
  const partKode = `${prefix}-${randomUUID().slice(0, 8)}`;
  const definisjonGuid = randomUUID();
  await admin.opprettPart({ partKode });
  await admin.opprettInnstillingDefinisjon({
    definisjonMalGuid: SAMTYKKE,
    definisjonGuid,
    partKode,
    navn,
    replikering: true,
  });
  return { admin, partKode, definisjonGuid };
}

/** A seeded pseudo-random sequence, so a failure can be replayed (MIRROR_SEED). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every active setting of the party's definitions, as a fresh walk sees it. */
async function freshWalk(client: PrivacyClient, partKode: string): Promise<string[]> {
  const rows: string[] = [];
  const { definisjoner } = await client.hentInnstillingDefinisjoner({ partKode });
  for (const d of definisjoner) {
    for await (const page of client.activeCitizens({
      definisjonGuid: d.definisjonGuid,
      partKode,
    })) {
      for (const p of page.personvernInnstillinger) {
        rows.push(
          `${d.definisjonGuid} ${p.innbyggerFnr} ${p.sekvensnummer} ${p.sistEndretTidspunkt}`,
        );
      }
    }
  }
  return rows.sort();
}

describe('npm run privacy-mirror', () => {
  it('when 2,000 changes happen with the mirror stopped for a third and NATS restarted once, then the copy equals a fresh walk', async () => {
    const seed = Number(process.env['MIRROR_SEED'] ?? Date.now() % 100_000);
    process.stdout.write(`privacy-mirror test seed ${seed} (MIRROR_SEED replays it)\n`);
    const next = random(seed);

    const { client: admin } = await clientFor(['admin']);
    const partKode = `mirror-${randomUUID().slice(0, 8)}`;
    const definitions = [randomUUID(), randomUUID()];
    await admin.opprettPart({ partKode });
    for (const [i, definisjonGuid] of definitions.entries()) {
      await admin.opprettInnstillingDefinisjon({
        definisjonMalGuid: i === 0 ? SAMTYKKE : RESERVASJON,
        definisjonGuid,
        partKode,
        navn: `definisjon ${i}`,
        replikering: true,
      });
    }
    const { client: writer, clientId: writerId } = await clientFor(['write']);
    const { client: reader, clientId: readerId } = await clientFor(['read']);
    await stack.admin('grant', '--client', writerId, '--part', partKode, '--write');
    await stack.admin('grant', '--client', readerId, '--part', partKode, '--read');
    const citizens = Array.from({ length: CITIZENS }, (_, i) => syntheticFnr(1000 + i));
    const typeOf = [`samtykke`, `reservasjon`] as const;

    // A few citizens are active before the mirror's first walk, so the walk has something.
    for (let i = 0; i < 20; i++) {
      await writer.settInnbyggersPersonvernInnstilling({
        innbyggerFnr: citizens[i] as string,
        definisjonGuid: definitions[0] as string,
        partKode,
        typePi: 'samtykke',
        aktiv: true,
      });
    }
    let endret = 20;
    async function changes(from: number, to: number): Promise<void> {
      const plan = Array.from({ length: to - from }, () => {
        const d = Math.floor(next() * definitions.length);
        return {
          innbyggerFnr: citizens[Math.floor(next() * CITIZENS)] as string,
          definisjonGuid: definitions[d] as string,
          typePi: typeOf[d],
          aktiv: next() < 0.6,
        };
      });
      // Eight writers at a time, as several systems would.
      let cursor = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (cursor < plan.length) {
            const change = plan[cursor++];
            if (!change) break;
            const answer = await writer.settInnbyggersPersonvernInnstilling({
              ...change,
              partKode,
            });
            if (answer.instansEndret === 'endret') endret += 1;
          }
        }),
      );
    }

    const store = new JsonFileMirrorStore(join(dir, 'copy.json'));
    const run = (extra: { once?: boolean; signal?: AbortSignal } = {}) =>
      runPrivacyMirror({
        client: reader,
        api: stack.apiUrl,
        nats: stack.nats.url,
        partKode,
        store,
        ackWaitSec: 5,
        ...extra,
      });

    // 1. The mirror runs: its first walk, then the first third of the changes, with a NATS restart.
    const first = new AbortController();
    const firstRun = run({ signal: first.signal });
    await waitFor('the first walk', async () => (await store.load())?.walkedAt, {
      timeoutMs: 30_000,
    });
    await changes(0, 333);
    await stack.nats.stop();
    await changes(333, 500);
    await stack.nats.restart();
    await changes(500, 667);
    first.abort();
    const firstSummary: MirrorRunSummary = await firstRun;
    expect(firstSummary.walked).toBe(true);

    // 2. The mirror is stopped for the second third.
    await changes(667, 1334);

    // 3. It resumes from its consumer's position, without a walk, for the last third.
    const third = new AbortController();
    const thirdRun = run({ signal: third.signal });
    await changes(1334, CHANGES);
    third.abort();
    const thirdSummary = await thirdRun;
    expect(thirdSummary.walked).toBe(false);

    // Every change answered `endret` is in the stream (published from privacy-api's journal).
    const nc = await connect({ servers: stack.nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      const subject = settingChangedSubject(partKode);
      await waitFor(
        'every change in PRIVACY_EVENTS',
        async () => {
          const info = await jsm.streams.info(PRIVACY_EVENTS_STREAM, { subjects_filter: subject });
          return (info.state.subjects?.[subject] ?? 0) === endret;
        },
        { timeoutMs: 30_000 },
      );
    } finally {
      await nc.close();
    }

    // 4. --once catches up and exits; the copy then equals a fresh walk.
    const last = await run({ once: true });
    expect(last.walked).toBe(false);
    const copy = await store.load();
    const mirrored = (copy?.settings ?? [])
      .filter((e) => e.aktiv)
      .map(
        (e) => `${e.definisjonGuid} ${e.innbyggerFnr} ${e.sekvensnummer} ${e.sistEndretTidspunkt}`,
      )
      .sort();
    const walked = await freshWalk(reader, partKode);
    expect(walked.length).toBeGreaterThan(0);
    expect(mirrored).toEqual(walked);
    // Inactive entries hold the latest sekvensnummer too: none is behind the service.
    for (const entry of (copy?.settings ?? []).filter((e) => !e.aktiv).slice(0, 20)) {
      const status = await reader.sjekkInnbyggersPiStatus({
        innbyggerFnr: entry.innbyggerFnr,
        definisjonGuid: entry.definisjonGuid,
        partKode,
      });
      expect({ aktiv: status.aktiv, sekvensnummer: status.sekvensnummer }).toEqual({
        aktiv: false,
        sekvensnummer: entry.sekvensnummer,
      });
    }
  }, 120_000);
});

describe('what the mirror prints', () => {
  it('when it follows a party, then it says so, prints one line per change with the citizen masked, and says when NATS is lost and back', async () => {
    const { admin, partKode, definisjonGuid } = await partWithConsent(
      'print',
      'Samtykke til utskrift',
    );
    const { client: reader, clientId: readerId } = await clientFor(['read']);
    await stack.admin('grant', '--client', readerId, '--part', partKode, '--read');
    const lines: string[] = [];
    const seen = (pattern: RegExp) => () => lines.some((l) => pattern.test(l));
    const controller = new AbortController();
    const running = runPrivacyMirror({
      client: reader,
      api: stack.apiUrl,
      nats: stack.nats.url,
      partKode,
      store: new JsonFileMirrorStore(join(dir, `${partKode}.json`)),
      signal: controller.signal,
      report: (line) => lines.push(line),
    });
    try {
      await waitFor('following', seen(/^following privacy\.events\.setting-changed\./), {
        timeoutMs: 30_000,
      });
      const innbyggerFnr = syntheticFnr(7001);
      const set = (aktiv: boolean) =>
        admin.settInnbyggersPersonvernInnstilling({
          innbyggerFnr,
          definisjonGuid,
          partKode,
          aktiv,
        });
      await set(true);
      await waitFor('the first change', seen(/sekvensnummer 1$/), { timeoutMs: 30_000 });

      await stack.nats.stop();
      await waitFor('NATS lost', seen(/^NATS lost/), { timeoutMs: 30_000 });
      await stack.nats.restart();
      await waitFor('NATS back', seen(/^NATS is back/), { timeoutMs: 30_000 });
      await set(false);
      await waitFor('the second change', seen(/sekvensnummer 2$/), { timeoutMs: 30_000 });
    } finally {
      controller.abort();
      await running;
    }
    const changes = lines.filter((l) => l.startsWith('changed:'));
    expect(changes).toEqual([
      `changed: innbyggerFnr [Redacted], definisjon ${definisjonGuid} (Samtykke til utskrift), aktiv true, sekvensnummer 1`,
      `changed: innbyggerFnr [Redacted], definisjon ${definisjonGuid} (Samtykke til utskrift), aktiv false, sekvensnummer 2`,
    ]);
    expect(lines.join('\n')).not.toContain(syntheticFnr(7001));
  }, 120_000);
});

describe('a mirror started before NATS is there', () => {
  it('when NATS cannot be reached, then it says that it waits, and a stop ends the wait', async () => {
    const lines: string[] = [];
    const controller = new AbortController();
    const { client: reader } = await clientFor(['read']);
    const running = runPrivacyMirror({
      client: reader,
      api: stack.apiUrl,
      nats: `nats://127.0.0.1:${await freePort()}`,
      partKode: 'nowhere',
      store: new JsonFileMirrorStore(join(dir, 'nowhere.json')),
      signal: controller.signal,
      natsWaitNoticeMs: 100,
      report: (line) => lines.push(line),
    });
    await waitFor('the waiting notice', () => lines.some((l) => l.startsWith('waiting for NATS')));
    controller.abort();
    expect((await running).walked).toBe(false);
    expect(lines.at(-1)).toBe('stopped before NATS was reached');
  });
});

describe('the command line', () => {
  it('when run with client credentials and --once beside npm start, then it finds privacy-api and NATS, walks, catches up, exits 0 and writes one entry per setting', async () => {
    const { admin, partKode, definisjonGuid } = await partWithConsent('cli');
    const innbyggerFnr = syntheticFnr(9001);
    await admin.settInnbyggersPersonvernInnstilling({
      innbyggerFnr,
      definisjonGuid,
      partKode,
      aktiv: true,
    });
    const clientId = `mirror-cli-${randomUUID().slice(0, 8)}`;
    const keyFile = join(dir, `${clientId}.jwk.json`);
    const { privateJwk } = await stack.register({ clientId, scopes: ['read'] });
    await writeFile(keyFile, JSON.stringify(privateJwk));
    await stack.admin('grant', '--client', clientId, '--part', partKode, '--read');
    const storeFile = join(dir, `${clientId}.json`);

    // No --api or --nats: those of the running npm start, which says where they are.
    const stackDir = join(dir, `${clientId}-stack`);
    await mkdir(stackDir);
    await writeDevStack(stackDir, {
      mongoUrl: stack.mongoUrl,
      natsUrl: stack.nats.url,
      privacyApiUrl: stack.apiUrl,
    });

    const result = await runCli(
      [
        '--part',
        partKode,
        '--store',
        storeFile,
        '--once',
        '--issuer',
        stack.issuerUrl,
        '--client-id',
        clientId,
        '--key',
        keyFile,
      ],
      { DEV_DATA_DIR: stackDir },
    );
    expect(result.code).toBe(0);
    expect(result.output).toContain(
      `using npm start's privacy-api ${stack.apiUrl} and NATS ${stack.nats.url}`,
    );
    expect(result.output).toMatch(/walked .*: 1 active/);
    expect(result.output).toMatch(/^catching up with privacy\.events\.setting-changed\./m);
    expect(result.output).not.toContain(innbyggerFnr);
    const copy = JSON.parse(await readFile(storeFile, 'utf8')) as { settings: unknown[] };
    expect(copy.settings).toEqual([
      expect.objectContaining({ definisjonGuid, innbyggerFnr, aktiv: true, sekvensnummer: 1 }),
    ]);
  }, 60_000);

  it('when neither client credentials nor PRIVACY_CLIENT_TOKEN are given, then it exits 2 naming both', async () => {
    const result = await runCli([
      '--api',
      'http://127.0.0.1:1',
      '--nats',
      'nats://127.0.0.1:1',
      '--part',
      'p',
      '--store',
      join(dir, 'x.json'),
    ]);
    expect(result.code).toBe(2);
    expect(result.output).toMatch(/PRIVACY_CLIENT_TOKEN/);
  });
});

function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const root = resolve(__dirname, '../../..');
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(root, 'tools/privacy-mirror/src/main.ts'), ...args],
      {
        cwd: root,
        env: {
          PATH: process.env['PATH'] ?? '',
          TSX_TSCONFIG_PATH: resolve(root, 'tsconfig.base.json'),
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.once('exit', (code) => done({ code, output }));
  });
}
