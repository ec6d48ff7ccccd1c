/**
 * What both topologies of the dev stack share: the apps, their processes and logs, the health
 * wait, the development key and the sample data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { start as startMongoServer } from '@nhp/mongo-server';
import { sampleDataPath } from '@nhp/refsync-sample-data';
import { ensureDevKey } from '@nhp/privacy-auth';
import { DEV_ISSUER_PORT } from '@nhp/privacy-dev-issuer';

export const root = resolve(__dirname, '../../..');
export const dataDir = resolve(process.env['DEV_DATA_DIR'] ?? join(root, '.data'));

export interface AppSpec {
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

export const apps: AppSpec[] = [
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

export const privacyApiApp = apps[0] as AppSpec;

/** The summary's line on the apps' log level. */
export const appLogLevelNote = () =>
  process.env['LOG_LEVEL']
    ? `${process.env['LOG_LEVEL']} (LOG_LEVEL)`
    : stackOptions.verbose
      ? 'info (--verbose)'
      : 'warn (npm start -- --verbose: info)';

/** The port an app listens on: its variable as set, else its default. */
export const portOf = (app: AppSpec) => Number(process.env[app.portVariable] ?? app.defaultPort);

export const say = (line: string) => process.stdout.write(`\x1b[1m[dev-stack]\x1b[0m ${line}\n`);

/** `--verbose`: the apps log at `info` (LOG_LEVEL, when set, wins either way). */
export const stackOptions = { verbose: false };

/**
 * The apps' log level: `warn` unless asked, so that the summary is not buried under every app's
 * start-up lines, and what is shown later (a warning, an error) stands out.
 */
export const appLogLevel = () =>
  process.env['LOG_LEVEL'] ?? (stackOptions.verbose ? 'info' : 'warn');

/**
 * Where the apps' traces go, or how to see them: the apps inherit this shell's OTEL_* variables,
 * so a collector is one variable away (the compose file's observability profile runs one).
 */
export function tracingHint(): string {
  const endpoint =
    process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  if (endpoint?.trim()) return `  traces            exported to ${endpoint} (OTEL_* variables)`;
  return [
    '  traces            off. To see them: start a local collector and Jaeger',
    '                      docker-compose --profile observability up -d otel-collector jaeger',
    '                    then run the stack with',
    '                      OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 npm start',
    '                    and open Jaeger at http://localhost:16686 (README, "Observability")',
  ].join('\n');
}

export function pipeWithPrefix(
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

/**
 * Starts one app from source (tsx, as in development) on `port`, its output prefixed with `label`
 * in the app's colour. `env` comes last and wins.
 */
export function spawnApp(
  app: AppSpec,
  port: number,
  label: string,
  env: Record<string, string>,
): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, app.entry)], {
    cwd: root,
    env: {
      ...process.env,
      // tsx resolves the @nhp/* path aliases from this tsconfig (the repo has no root tsconfig.json).
      TSX_TSCONFIG_PATH: join(root, 'tsconfig.base.json'),
      NODE_ENV: process.env['NODE_ENV'] ?? 'development',
      LOG_PRETTY: process.env['LOG_PRETTY'] ?? 'true',
      LOG_LEVEL: appLogLevel(),
      ...app.env,
      ...env,
      [app.portVariable]: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own: Ctrl-C in the terminal reaches the stack only, which stops
    // each app once with SIGTERM. In the terminal's group every app would get the SIGINT as well
    // as the stack's SIGTERM, and say for each that its shutdown was already in progress.
    detached: true,
  });
  const prefix = `\x1b[${app.color}m[${label}]\x1b[0m`;
  pipeWithPrefix(child.stdout, prefix, process.stdout);
  pipeWithPrefix(child.stderr, prefix, process.stderr);
  return child;
}

export async function waitHealthy(
  url: string,
  child: ChildProcess,
  timeoutMs: number,
): Promise<boolean> {
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
export function seedPrivacySampleData(mongoUrl: string): Promise<void> {
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

export function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
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
export async function privacyAuthEnv(): Promise<Record<string, string>> {
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

/** The development OpenID provider (tools/privacy-dev-issuer); never part of a production image. */
export const devIssuerApp: AppSpec = {
  name: 'privacy-issuer',
  entry: 'tools/privacy-dev-issuer/src/main.ts',
  portVariable: 'PRIVACY_DEV_ISSUER_PORT',
  defaultPort: DEV_ISSUER_PORT,
  color: 35,
};

/**
 * Whether `npm start` runs the development issuer: unless privacy-api is given an issuer of its
 * own (PRIVACY_AUTH_*), or NODE_ENV is production (the issuer refuses to start there).
 */
export function wantsDevIssuer(): boolean {
  const configured = ['PRIVACY_AUTH_ISSUER', 'PRIVACY_AUTH_JWKS_URL', 'PRIVACY_AUTH_JWKS_FILE'];
  return !configured.some((name) => process.env[name]) && process.env['NODE_ENV'] !== 'production';
}

/**
 * privacy-api trusts the running development issuer as it would trust HelseID: by issuer and
 * JWKS URL. The issuer signs with the development key, so `npm run privacy-token` still works.
 */
export async function devIssuerAuthEnv(port: number): Promise<Record<string, string>> {
  const devKey = await ensureDevKey(dataDir);
  const issuer = port === DEV_ISSUER_PORT ? devKey.issuer : `http://localhost:${port}`;
  return { PRIVACY_AUTH_ISSUER: issuer, PRIVACY_AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks` };
}

/** What privacy-api is told to trust, and the issuer process when the stack runs one. */
export interface PrivacyIssuer {
  /** PRIVACY_AUTH_* for privacy-api. */
  env: Record<string, string>;
  /** The development issuer's process, when started. */
  child?: ChildProcess;
  /** Its line in the stack's summary. */
  summaryLine?: string;
}

/**
 * Starts the development OpenID provider when wanted (wantsDevIssuer) and says what privacy-api
 * must trust: the issuer's JWKS URL, or else the configured issuer or the development key file.
 * `onExit` is called if the issuer stops while the stack runs. Both `npm start` and
 * `npm start -- --ha` run privacy-api behind it.
 */
export async function startPrivacyIssuer(
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void,
): Promise<PrivacyIssuer> {
  if (!wantsDevIssuer()) return { env: await privacyAuthEnv() };
  const port = portOf(devIssuerApp);
  const child = spawnApp(devIssuerApp, port, devIssuerApp.name, {});
  child.once('exit', onExit);
  const healthy = await waitHealthy(
    `http://127.0.0.1:${port}/.well-known/openid-configuration`,
    child,
    90_000,
  );
  if (!healthy) throw new Error(`the development issuer did not start on port ${port}`);
  return {
    env: await devIssuerAuthEnv(port),
    child,
    summaryLine: `  ${devIssuerApp.name.padEnd(17)} http://localhost:${port}  development OpenID provider (clients: npm run privacy-issuer -- register --help)`,
  };
}

/**
 * MongoDB at MONGO_URL, or the project's MongoDB-compatible server (one process, no replica set)
 * with its data in `<DEV_DATA_DIR>/mongo`. Its stop is also pushed onto `started`.
 */
export async function startMongo(
  started: Array<() => Promise<void>>,
): Promise<{ url: string; stop(): Promise<void> }> {
  const given = process.env['MONGO_URL'];
  if (given) {
    say('using MongoDB at MONGO_URL');
    return { url: given, stop: () => Promise.resolve() };
  }
  await mkdir(join(dataDir, 'mongo'), { recursive: true });
  const mongo = await startMongoServer({
    port: Number(process.env['DEV_MONGO_PORT'] ?? 0),
    dataFile: join(dataDir, 'mongo', 'nhp.bson'),
  });
  const stop = () => mongo.stop();
  started.push(stop);
  const url = `${mongo.uri}/nhp`;
  say(`embedded MongoDB-compatible server (data ${join(dataDir, 'mongo')}) on ${url}`);
  return { url, stop };
}
