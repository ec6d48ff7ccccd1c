/**
 * `npm start`: the whole stack on one machine with embedded defaults.
 * - NATS: NATS_URL, or a nats-server spawned here (JetStream store in .data/nats).
 * - MongoDB: MONGO_URL, or the project's MongoDB-compatible server (data file in .data/mongo).
 * - The three apps, each as its own Node process (as in production), with readable logs.
 * - privacy-api trusts the development signing key (created in .data/ when missing; `npm run
 *   privacy-token` signs with it) unless PRIVACY_AUTH_ISSUER / PRIVACY_AUTH_JWKS_* are set.
 * Ctrl-C (or SIGTERM) stops the apps first, then the infrastructure, and leaves no child behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { start as startMongoServer } from '@nhp/mongo-server';
import { sampleDataPath } from '@nhp/refsync-sample-data';
import { ensureDevKey } from '@nhp/privacy-auth';
import { startNatsServer, type NatsServerProcess } from '@nhp/shared-testing';

const root = resolve(__dirname, '../../..');
const dataDir = resolve(process.env['DEV_DATA_DIR'] ?? join(root, '.data'));

interface AppSpec {
  name: string;
  entry: string;
  portVariable: string;
  defaultPort: number;
  color: number;
  /** Variables this app needs that the environment may leave unset. */
  env?: Record<string, string>;
}

/** An upstream variable as set, else the bundled v1 sample file (the importer has no default). */
const sampleSource = (variable: string, dataset: 'treatmentGroup' | 'reimbursementGroup') =>
  process.env[variable] || pathToFileURL(sampleDataPath('v1', dataset)).href;

const apps: AppSpec[] = [
  {
    name: 'privacy-api',
    entry: 'apps/privacy-api/src/main.ts',
    portVariable: 'PRIVACY_API_PORT',
    defaultPort: 3001,
    color: 36,
  },
  {
    name: 'refsync-api',
    entry: 'apps/refsync-api/src/main.ts',
    portVariable: 'REFSYNC_API_PORT',
    defaultPort: 3002,
    color: 35,
  },
  {
    name: 'refsync-importer',
    entry: 'apps/refsync-importer/src/main.ts',
    portVariable: 'REFSYNC_IMPORTER_PORT',
    defaultPort: 3003,
    color: 33,
    env: {
      REFSYNC_SOURCE_TREATMENT_GROUP: sampleSource(
        'REFSYNC_SOURCE_TREATMENT_GROUP',
        'treatmentGroup',
      ),
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: sampleSource(
        'REFSYNC_SOURCE_REIMBURSEMENT_GROUP',
        'reimbursementGroup',
      ),
    },
  },
];

/** What main() has started so far, stopped in reverse if start-up fails half way. */
const startedInfra: Array<() => Promise<void>> = [];

const say = (line: string) => process.stdout.write(`\x1b[1m[dev-stack]\x1b[0m ${line}\n`);

function pipeWithPrefix(
  stream: NodeJS.ReadableStream | null,
  prefix: string,
  out: NodeJS.WriteStream,
): void {
  if (!stream) return;
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) out.write(`${prefix} ${line}\n`);
  });
  stream.on('end', () => rest && out.write(`${prefix} ${rest}\n`));
}

async function waitHealthy(url: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return false;
}

/**
 * privacy-api's sample data (tools/privacy-sample-data): a development party, definitions,
 * settings and representation relationships. A failure is reported and the stack stays up.
 */
function seedPrivacySampleData(mongoUrl: string): Promise<void> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'tools/privacy-sample-data/src/main.ts')],
      {
        cwd: root,
        env: {
          ...process.env,
          TSX_TSCONFIG_PATH: join(root, 'tsconfig.base.json'),
          NODE_ENV: process.env['NODE_ENV'] ?? 'development',
          MONGO_URL: mongoUrl,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    pipeWithPrefix(child.stdout, '\x1b[36m[privacy-sample-data]\x1b[0m', process.stdout);
    pipeWithPrefix(child.stderr, '\x1b[36m[privacy-sample-data]\x1b[0m', process.stderr);
    child.once('error', () => done());
    child.once('exit', () => done());
  });
}

function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const force = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** privacy-api's token issuer: the one configured, or the development key. */
async function privacyAuthEnv(): Promise<Record<string, string>> {
  const configured = ['PRIVACY_AUTH_ISSUER', 'PRIVACY_AUTH_JWKS_URL', 'PRIVACY_AUTH_JWKS_FILE'];
  if (configured.some((name) => process.env[name])) {
    say('privacy-api: using the configured PRIVACY_AUTH_* issuer');
    return {};
  }
  const devKey = await ensureDevKey(dataDir);
  say(
    `privacy-api trusts the development key ${devKey.jwksFile} (tokens: npm run privacy-token -- --help)`,
  );
  return { PRIVACY_AUTH_ISSUER: devKey.issuer, PRIVACY_AUTH_JWKS_FILE: devKey.jwksFile };
}

async function main(): Promise<void> {
  await mkdir(join(dataDir, 'mongo'), { recursive: true });
  await mkdir(join(dataDir, 'nats'), { recursive: true });

  let nats: NatsServerProcess | undefined;
  let natsUrl = process.env['NATS_URL'];
  if (!natsUrl) {
    nats = await startNatsServer({ storeDir: join(dataDir, 'nats') });
    startedInfra.push(() => (nats ? nats.dispose() : Promise.resolve()));
    natsUrl = nats.url;
    say(`nats-server (JetStream, store ${join(dataDir, 'nats')}) on ${natsUrl}`);
  } else {
    say(`using NATS at NATS_URL`);
  }

  let mongo: Awaited<ReturnType<typeof startMongoServer>> | undefined;
  let mongoUrl = process.env['MONGO_URL'];
  if (!mongoUrl) {
    mongo = await startMongoServer({
      port: Number(process.env['DEV_MONGO_PORT'] ?? 0),
      dataFile: join(dataDir, 'mongo', 'nhp.bson'),
    });
    startedInfra.push(() => (mongo ? mongo.stop() : Promise.resolve()));
    mongoUrl = `${mongo.uri}/nhp`;
    say(`embedded MongoDB-compatible server (data ${join(dataDir, 'mongo')}) on ${mongoUrl}`);
  } else {
    say('using MongoDB at MONGO_URL');
  }

  const appEnv: Record<string, Record<string, string>> = { 'privacy-api': await privacyAuthEnv() };

  const children = new Map<string, ChildProcess>();
  let stopping = false;

  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await Promise.all([...children.values()].map((c) => stopChild(c, 15_000)));
    await mongo?.stop();
    await nats?.dispose();
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  for (const app of apps) {
    const port = Number(process.env[app.portVariable] ?? app.defaultPort);
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, app.entry)], {
      cwd: root,
      env: {
        ...process.env,
        // tsx resolves the @nhp/* path aliases from this tsconfig (the repo has no root tsconfig.json).
        TSX_TSCONFIG_PATH: join(root, 'tsconfig.base.json'),
        NODE_ENV: process.env['NODE_ENV'] ?? 'development',
        LOG_PRETTY: process.env['LOG_PRETTY'] ?? 'true',
        ...app.env,
        MONGO_URL: mongoUrl,
        NATS_URL: natsUrl,
        [app.portVariable]: String(port),
        ...appEnv[app.name],
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const prefix = `\x1b[${app.color}m[${app.name}]\x1b[0m`;
    pipeWithPrefix(child.stdout, prefix, process.stdout);
    pipeWithPrefix(child.stderr, prefix, process.stderr);
    child.once('exit', (code, signal) => {
      if (stopping) return;
      say(`${app.name} exited (${signal ?? code}); stopping the stack`);
      void stopAll(1);
    });
    children.set(app.name, child);
  }

  const summary: string[] = [];
  for (const [name, child] of children) {
    const app = apps.find((a) => a.name === name) as AppSpec;
    const port = Number(process.env[app.portVariable] ?? app.defaultPort);
    const healthy = await waitHealthy(`http://127.0.0.1:${port}/health`, child, 90_000);
    summary.push(
      `  ${app.name.padEnd(17)} http://localhost:${port}  ${healthy ? 'healthy' : 'NOT healthy yet'}`,
    );
    // privacy-api has created its built-in data: add the sample data (idempotent, dev only).
    if (name === 'privacy-api' && healthy) await seedPrivacySampleData(mongoUrl);
  }
  say(
    `stack is up (Ctrl-C stops everything):\n${summary.join('\n')}\n  MongoDB           ${mongoUrl}\n  NATS              ${natsUrl}`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    `[dev-stack] failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  void Promise.allSettled(startedInfra.reverse().map((stop) => stop())).then(() => process.exit(1));
});
