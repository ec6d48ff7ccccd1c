// The server as a separate process, started as `npm run mongo-server` starts it, for fault tests:
// they stop it with SIGTERM or SIGKILL and start it again on the same port and data file. The JSON
// log lines it prints are kept, so a test can wait for one (e.g. the compaction test hook's).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
/** Log lines kept per process (the oldest are dropped). */
const KEEP_LINES = 2000;

export interface ServerProcessOptions {
  dataFile: string;
  /** Default 0: the server picks a free port, which restarts then reuse. */
  port?: number;
  host?: string;
  /** Extra CLI flags, e.g. ['--journal-max-bytes', '100000']. */
  args?: string[];
  /** Extra environment, e.g. MONGO_SERVER_TEST_PAUSE_COMPACTION. */
  env?: Record<string, string>;
}

export interface ServerProcess {
  readonly uri: string;
  readonly port: number;
  readonly dataFile: string;
  /** The running process's id; undefined while stopped. */
  readonly pid: number | undefined;
  /** The current process's JSON log lines so far. */
  readonly lines: ReadonlyArray<Record<string, unknown>>;
  /** Resolves with the first log line (of the current process) whose `msg` is `msg`. */
  waitForLog(msg: string): Promise<Record<string, unknown>>;
  /** Sends `signal` (default SIGTERM) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Starts the server again on the same port and data file (stopping it with SIGTERM first if it
   * runs). `env` replaces the extra environment for this and later starts.
   */
  restart(options?: { env?: Record<string, string> }): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  stop(): Promise<void>;
}

/**
 * Node's arguments for the server (its flags, launch.mjs), read from package.json's "mongo-server"
 * script: the one place that says how the server runs, so that tests, benches and `npm run
 * mongo-server` start the same code with the same flags (e.g. the young generation's cap, README
 * "Memory"). Paths in it are relative to the repository root, the cwd to spawn with.
 */
export function serverNodeArgs(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const script = pkg.scripts['mongo-server'] ?? '';
  const [program, ...args] = script.trim().split(/\s+/);
  // Only a plain `node <args>` is understood here; anything shell-like would be run differently.
  if (program !== 'node' || args.some((a) => /["'$`\\;&|<>]/.test(a))) {
    throw new Error(
      `package.json's mongo-server script is not a plain "node ..." command: ${script}`,
    );
  }
  return args;
}

interface Launched {
  child: ChildProcess;
  port: number;
  lines: Array<Record<string, unknown>>;
  listeners: Array<(line: Record<string, unknown>) => void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function launch(
  opts: ServerProcessOptions,
  port: number,
  env: Record<string, string>,
): Promise<Launched> {
  const args = [
    ...serverNodeArgs(),
    '--port',
    String(port),
    '--host',
    opts.host ?? '127.0.0.1',
    '--data-file',
    opts.dataFile,
    '--log-level',
    'info',
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const listeners: Launched['listeners'] = [];
  let stderr = '';
  let buffer = '';
  // Both pipes are always drained: a child blocked on a full pipe would look like a hung server.
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8000)));
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { msg: text };
      }
      lines.push(line);
      if (lines.length > KEEP_LINES) lines.shift();
      for (const l of [...listeners]) l(line);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const onLine = (line: Record<string, unknown>): void => {
      if (line['msg'] !== 'ready') return;
      listeners.splice(listeners.indexOf(onLine), 1);
      resolve({ child, port: Number(line['port']), lines, listeners, exited });
    };
    listeners.push(onLine);
    void exited.then(({ code, signal }) => {
      const tail = lines
        .slice(-5)
        .map((l) => JSON.stringify(l))
        .join('\n');
      reject(
        new Error(
          `mongo-server process exited (${signal ?? code}) before it was ready:\n${stderr}${tail}`,
        ),
      );
    });
  });
}

/** Starts the CLI in its own process and resolves once it is ready. */
export async function startServerProcess(opts: ServerProcessOptions): Promise<ServerProcess> {
  let env = opts.env ?? {};
  let current: Launched | undefined = await launch(opts, opts.port ?? 0, env);
  const port = current.port;
  const host = opts.host ?? '127.0.0.1';
  const kill = async (
    signal: NodeJS.Signals = 'SIGTERM',
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
    const running = current;
    if (!running) return { code: null, signal: null };
    running.child.kill(signal);
    const result = await running.exited;
    if (current === running) current = undefined;
    return result;
  };
  const stop = async (): Promise<void> => {
    const running = current;
    if (!running) return;
    const force = setTimeout(() => running.child.kill('SIGKILL'), 10_000);
    try {
      await kill('SIGTERM');
    } finally {
      clearTimeout(force);
    }
  };
  return {
    uri: `mongodb://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    dataFile: opts.dataFile,
    get pid() {
      return current?.child.pid;
    },
    get lines() {
      return current?.lines ?? [];
    },
    waitForLog(msg) {
      const running = current;
      if (!running) return Promise.reject(new Error('the mongo-server process is not running'));
      const found = running.lines.find((l) => l['msg'] === msg);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const onLine = (line: Record<string, unknown>): void => {
          if (line['msg'] !== msg) return;
          running.listeners.splice(running.listeners.indexOf(onLine), 1);
          resolve(line);
        };
        running.listeners.push(onLine);
        void running.exited.then(({ code, signal }) =>
          reject(
            new Error(`mongo-server process exited (${signal ?? code}) before logging "${msg}"`),
          ),
        );
      });
    },
    kill,
    async restart(options) {
      await stop();
      if (options?.env) env = options.env;
      current = await launch(opts, port, env);
    },
    stop,
  };
}
