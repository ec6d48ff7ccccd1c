import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

export const ROOT = resolve(__dirname, '../../../..');

/**
 * An app's entry bundled as its image builds it (one file for Node 24, packages left to
 * node_modules), written to `outfile`. Packages resolve from this repository's node_modules, so
 * an entry in another checkout (an older commit's sources) brings only its sources.
 */
export async function bundleApp(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node24',
    packages: 'external',
    logLevel: 'warning',
    outfile,
    nodePaths: [join(ROOT, 'node_modules')],
  });
  return outfile;
}

/**
 * Runs a TypeScript program of the workspace in its own Node process, as a person would run it,
 * and returns its exit code and the tail of its output.
 */
export function runTs(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.base.json'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return new Promise((done) => child.on('exit', (code) => done({ code, output })));
}

/** Like runTs, but a non-zero exit is an error carrying the program's output. */
export async function runTsOrThrow(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<void> {
  const { code, output } = await runTs(entry, args, env);
  if (code !== 0) throw new Error(`${entry} ${args.join(' ')} exited ${code}:\n${output}`);
}

/** Writes a deterministic synthetic upstream file with the sample-data generator's CLI. */
export function generateSynthetic(
  dataset: string,
  count: number,
  out: string,
  changeShare = 0,
): Promise<void> {
  return runTsOrThrow('tools/refsync-sample-data/src/synthetic.ts', [
    '--dataset',
    dataset,
    '--count',
    String(count),
    '--out',
    out,
    '--change-share',
    String(changeShare),
  ]);
}

/**
 * A stand-in for a local OpenTelemetry collector: its own process (so receiving costs the measured
 * servers nothing but the sending), answering every OTLP/HTTP export 200 after reading its body.
 * Counts the exports it received, for a line that shows spans did go out.
 */
const COLLECTOR_STAND_IN = `
const http = require('node:http');
let exports = 0, bytes = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') return res.end(JSON.stringify({ exports, bytes }));
  req.on('data', (c) => (bytes += c.length));
  req.on('end', () => { exports++; res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export interface CollectorStandIn {
  url: string;
  pid: number | undefined;
  /** OTLP exports (requests) and bytes received so far. */
  received(): Promise<{ exports: number; bytes: number }>;
  stop(): void;
}

export function startCollectorStandIn(): Promise<CollectorStandIn> {
  const child = spawn(process.execPath, ['-e', COLLECTOR_STAND_IN], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`collector stand-in exited ${code}`)));
    child.stdout.once('data', (chunk: Buffer) => {
      const url = `http://127.0.0.1:${chunk.toString().trim()}`;
      resolve({
        url,
        pid: child.pid,
        received: async () =>
          (await (await fetch(url)).json()) as { exports: number; bytes: number },
        stop: () => void child.kill(),
      });
    });
  });
}

/**
 * The OTEL_* variables of an app measured with tracing on: 10% sampled, to the stand-in.
 * BENCH_TRACES_SAMPLER_ARG sets another ratio (0: every request unsampled, 1: all sampled), to
 * split what tracing costs an unsampled request from what a sampled one adds.
 */
export function tracingOnEnv(collectorUrl: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: process.env['BENCH_TRACES_SAMPLER_ARG'] ?? '0.1',
  };
}

/** Tracing off whatever the shell running the bench has set (the apps inherit its environment). */
export const TRACING_OFF_ENV: Record<string, string> = {
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_TRACES_EXPORTER: '',
};

/**
 * privacy-api's environment as the benches run it: production, on loopback, trusting the test
 * issuer's keys in `jwksFile`, synthetic identity numbers allowed, tracing off (whatever the shell
 * says). Rows add or override variables after it.
 */
export function privacyApiBenchEnv(options: {
  mongoUrl: string;
  natsUrl: string;
  port: number;
  issuer: string;
  jwksFile: string;
}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    MONGO_URL: options.mongoUrl,
    NATS_URL: options.natsUrl,
    PRIVACY_API_PORT: String(options.port),
    PRIVACY_API_HOST: '127.0.0.1',
    PRIVACY_AUTH_ISSUER: options.issuer,
    PRIVACY_AUTH_JWKS_FILE: options.jwksFile,
    PRIVACY_ALLOW_SYNTHETIC_IDS: 'true',
    ...TRACING_OFF_ENV,
  };
}

/** What the services measured are built from (see sourceRoot). */
export interface SourceRoot {
  /** The folder holding the sources (`apps/`, `libs/`, `tsconfig.base.json`). */
  root: string;
  /** What it is, for the report: the ref and its commit, or the working tree. */
  label: string;
}

let source: Promise<SourceRoot> | undefined;

/**
 * Where the measured services' code comes from: the working tree, or with BENCH_BUILD_REF=<git
 * ref> that commit's tree, exported with `git archive` into tmp/bench-build/<commit>/ (inside the
 * repository, so that the bundles built from it resolve their packages from this checkout's
 * node_modules: compare commits with the same dependencies). Used to measure a change's BEFORE and
 * AFTER one run after the other on one machine: `BENCH_BUILD_REF=main npm run bench -- ...`, then
 * the same without it.
 */
export function sourceRoot(): Promise<SourceRoot> {
  source ??= (async () => {
    const git = (args: string[]) =>
      execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const ref = process.env['BENCH_BUILD_REF']?.trim();
    if (!ref) {
      const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
      return {
        root: ROOT,
        label: `working tree at ${git(['rev-parse', '--short', 'HEAD'])}${dirty ? ' with changes' : ''}`,
      };
    }
    const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
    const root = join(ROOT, 'tmp', 'bench-build', commit);
    if (!existsSync(join(root, 'tsconfig.base.json'))) {
      mkdirSync(root, { recursive: true });
      const archive = spawnSync('git', ['archive', '--format=tar', commit], {
        cwd: ROOT,
        maxBuffer: 1 << 30,
      });
      if (archive.status !== 0) throw new Error(`git archive ${commit} failed`);
      const tar = spawnSync('tar', ['-x', '-C', root], { input: archive.stdout });
      if (tar.status !== 0) throw new Error(`unpacking ${commit} failed`);
    }
    return { root, label: `BENCH_BUILD_REF=${ref} (${commit.slice(0, 7)})` };
  })();
  return source;
}
