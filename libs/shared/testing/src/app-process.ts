import { spawn, type ChildProcess } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { freePort } from './free-port';

const ROOT = resolve(__dirname, '../../../..');
/** Output lines kept per process (the oldest are dropped), so a long fault test stays bounded. */
const KEEP_LINES = 5000;
/** Raw output kept for error messages. */
const KEEP_TEXT = 16_000;

export interface StartAppProcessOptions {
  /** The app's entry point, e.g. `apps/privacy-api/src/main.ts` (relative to the repository root). */
  entry: string;
  /**
   * Node's arguments instead of `--import tsx <entry>`, e.g. a built bundle's
   * `['--enable-source-maps', 'main.js']`; `entry` then only names the process.
   */
  nodeArgs?: readonly string[];
  /** The working directory; default the repository root. */
  cwd?: string;
  /** The app's own variables. Only PATH is inherited, so a MONGO_URL of the shell never leaks in. */
  env?: Record<string, string>;
  args?: string[];
  /**
   * The variable the app reads its port from (`PRIVACY_API_PORT`): the port is chosen here (or
   * taken from `port`) and set, so `url` is known before the app listens.
   */
  portVariable?: string;
  port?: number;
  /** Answers 200 once the app serves; default `/health`. `null`: do not wait. */
  healthPath?: string | null;
  /** How long start waits for the health path; default 60 s (tsx compiles the app first). */
  startTimeoutMs?: number;
  /** Names the process in error messages; default the entry's directory. */
  name?: string;
}

export interface AppExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AppProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number | undefined;
  /** `http://127.0.0.1:<port>` (with a port). */
  readonly url: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<AppExit>;
  readonly running: boolean;
  /** Its JSON log lines (stdout and stderr) so far; the oldest are dropped after 5000. */
  readonly lines: ReadonlyArray<Record<string, unknown>>;
  /** The end of its raw output (both streams), for error messages. */
  output(): string;
  /** Resolves with the first log line (so far or later) that matches; rejects if it exits first. */
  waitForLog(
    match: string | ((line: Record<string, unknown>) => boolean),
  ): Promise<Record<string, unknown>>;
  /** Resolves true once `path` answers 200, false if the process exits or `timeoutMs` passes. */
  healthy(path?: string, timeoutMs?: number): Promise<boolean>;
  /** Sends `signal` (default SIGTERM) and resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<AppExit>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs` (default 15 s). */
  stop(graceMs?: number): Promise<AppExit>;
}

/**
 * An app as an operator runs it: `node --import tsx <entry>` from the repository root (node, not the
 * tsx CLI, so a signal reaches the app itself and not a wrapper), with its environment, its output
 * kept as parsed JSON lines. Resolves once `healthPath` answers 200; if the app exits first, or does
 * not get healthy in time, it is stopped and the promise rejects with the app's last output.
 */
export async function startAppProcess(options: StartAppProcessOptions): Promise<AppProcess> {
  const entry = isAbsolute(options.entry) ? options.entry : resolve(ROOT, options.entry);
  const name = options.name ?? options.entry;
  const port = options.port ?? (options.portVariable !== undefined ? await freePort() : undefined);
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    TSX_TSCONFIG_PATH: resolve(ROOT, 'tsconfig.base.json'),
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ...(options.portVariable !== undefined ? { [options.portVariable]: String(port) } : {}),
    ...options.env,
  };
  const nodeArgs = options.nodeArgs ?? ['--import', 'tsx', entry];
  const child = spawn(process.execPath, [...nodeArgs, ...(options.args ?? [])], {
    cwd: options.cwd ?? ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

  const lines: Array<Record<string, unknown>> = [];
  const listeners = new Set<(line: Record<string, unknown>) => void>();
  let text = '';
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let buffer = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      text = (text + chunk).slice(-KEEP_TEXT);
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const raw = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!raw.startsWith('{')) continue;
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          continue;
        }
        lines.push(line);
        if (lines.length > KEEP_LINES) lines.shift();
        for (const listener of [...listeners]) listener(line);
      }
    });
  };
  // Both pipes are always drained: an app blocked on a full pipe would look like a hung app.
  collect(child.stdout);
  collect(child.stderr);

  let exit: AppExit | undefined;
  const exited = new Promise<AppExit>((done) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      done(exit);
    }),
  );
  const url = `http://127.0.0.1:${port ?? 0}`;

  const kill = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<AppExit> => {
    if (!exit) child.kill(signal);
    return exited;
  };
  const app: AppProcess = {
    name,
    child,
    port,
    url,
    exited,
    get running() {
      return exit === undefined;
    },
    lines,
    output: () => text,
    waitForLog(match) {
      const matches =
        typeof match === 'string' ? (l: Record<string, unknown>) => l['msg'] === match : match;
      const found = lines.find(matches);
      if (found) return Promise.resolve(found);
      return new Promise((done, fail) => {
        const listener = (line: Record<string, unknown>) => {
          if (!matches(line)) return;
          listeners.delete(listener);
          done(line);
        };
        listeners.add(listener);
        void exited.then((e) => {
          if (!listeners.delete(listener)) return;
          fail(new Error(`${name} exited (${e.signal ?? e.code}) before the log line`));
        });
      });
    },
    async healthy(path = options.healthPath ?? '/health', timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      while (!exit && Date.now() < end) {
        const ok = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(5000) })
          .then(async (res) => {
            await res.arrayBuffer();
            return res.status === 200;
          })
          .catch(() => false);
        if (ok) return true;
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    },
    kill,
    async stop(graceMs = 15_000) {
      if (exit) return exit;
      const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await kill('SIGTERM');
      } finally {
        clearTimeout(force);
      }
    },
  };

  if (options.healthPath !== null) {
    const ok = await app.healthy(options.healthPath ?? '/health', options.startTimeoutMs);
    if (!ok) {
      await app.stop(2000);
      throw new Error(
        `${name} did not answer ${options.healthPath ?? '/health'} with 200 ` +
          `(${exit ? `exited ${exit.signal ?? exit.code}` : 'timed out'}):\n${text}`,
      );
    }
  }
  return app;
}
