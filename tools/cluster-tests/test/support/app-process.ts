/**
 * An app of this repository as its own process, started from source with tsx as `npm start` does,
 * with its own environment only (PATH is inherited, nothing else of the shell's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from '@nhp/shared-testing';

export const ROOT = resolve(__dirname, '../../../..');
/** Output kept per process, for error messages and for asserting on log lines. */
const KEEP_OUTPUT = 200_000;

export interface AppProcess {
  readonly name: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly running: boolean;
  /** The end of its output (stdout and stderr). */
  output(): string;
  /** How many of its output lines so far contain `text` (one of `StartAppOptions.count`). */
  linesWith(text: string): number;
  /** Resolves true once `path` answers 200; false if the process exits first or time runs out. */
  healthy(path?: string, timeoutMs?: number): Promise<boolean>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartAppOptions {
  name: string;
  /** Entry point relative to the repository root, e.g. `apps/privacy-api/src/main.ts`. */
  entry: string;
  /** The variable the app reads its port from; a free port is chosen and set. */
  portVariable: string;
  /** The variable the app reads its host from; set to loopback. */
  hostVariable: string;
  env: Record<string, string>;
  /** Texts whose lines are counted over the whole run (`linesWith`). */
  count?: string[];
}

export async function startApp(options: StartAppOptions): Promise<AppProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', options.entry], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      TSX_TSCONFIG_PATH: resolve(ROOT, 'tsconfig.base.json'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      ...options.env,
      [options.portVariable]: String(port),
      [options.hostVariable]: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let partial = '';
  const counts = new Map((options.count ?? []).map((text) => [text, 0]));
  const keep = (chunk: string) => {
    output = (output + chunk).slice(-KEEP_OUTPUT);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      for (const text of counts.keys()) {
        if (line.includes(text)) counts.set(text, (counts.get(text) ?? 0) + 1);
      }
    }
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  return {
    name: options.name,
    port,
    url,
    get running() {
      return running();
    },
    output: () => output,
    linesWith(text) {
      const n = counts.get(text);
      if (n === undefined) throw new Error(`${options.name}: lines with "${text}" are not counted`);
      return n;
    },
    async healthy(path = '/health', timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      while (running() && Date.now() < deadline) {
        const ok = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(2000) })
          .then((r) => r.status === 200)
          .catch(() => false);
        if (ok) return true;
        await new Promise((r) => setTimeout(r, 200));
      }
      return false;
    },
    async stop(graceMs = 15_000) {
      if (!running()) return;
      const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(force);
    },
  };
}
