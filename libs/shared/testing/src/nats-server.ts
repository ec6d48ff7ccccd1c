import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class NatsServerNotFoundError extends Error {
  constructor() {
    super(
      'nats-server was not found on PATH. Install it (Debian: `apt-get install nats-server`) ' +
        'or point the tests at a running server with NATS_URL=nats://host:port.',
    );
    this.name = 'NatsServerNotFoundError';
  }
}

export interface NatsServerProcess {
  url: string;
  port: number;
  /** The JetStream store directory. */
  storeDir: string;
  /** Stops the process; the JetStream store stays so `restart()` brings the same streams back. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same store. */
  restart(): Promise<void>;
  /**
   * Sends `signal` (SIGTERM: a clean stop; SIGKILL: a crash) and resolves once it has exited; the
   * store stays, so `restart()` recovers the streams from it.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** The running process's id; undefined while stopped. */
  readonly pid: number | undefined;
  /** Stops the process and removes its temporary store. */
  dispose(): Promise<void>;
}

function natsServerBinary(): string {
  const found = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  if (found.error) throw new NatsServerNotFoundError();
  return 'nats-server';
}

const LISTENING = /Listening for client connections on [^\s]*:(\d+)/;

function launch(
  binary: string,
  port: number,
  storeDir: string,
  detached = false,
): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    // -p -1 lets the server pick a free port itself, so there is no window for a port race.
    const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached,
    });
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`nats-server did not start within 10 s:\n${output}`));
    }, 10_000);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      output += chunk;
      const match = LISTENING.exec(output);
      if (match && output.includes('Server is ready')) {
        clearTimeout(timer);
        child.stderr?.removeAllListeners('data');
        child.stderr?.resume();
        resolve({ child, port: Number(match[1]) });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited with code ${code} before it was ready:\n${output}`));
    });
  });
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface StartNatsServerOptions {
  /** JetStream store; kept on dispose. Default: a temporary directory that dispose removes. */
  storeDir?: string;
  /** Default: a free port chosen by the server. */
  port?: number;
  /**
   * A process group of its own, out of reach of the terminal's Ctrl-C: the dev stack stops it
   * itself, after the apps, so that they do not see NATS vanish while they shut down.
   */
  detached?: boolean;
}

/**
 * Spawns a private nats-server with JetStream on loopback: for tests (temporary store, free port)
 * and for the dev stack (a kept store).
 */
export async function startNatsServer(
  options: StartNatsServerOptions = {},
): Promise<NatsServerProcess> {
  const binary = natsServerBinary();
  const ownsStore = options.storeDir === undefined;
  const storeDir = options.storeDir ?? (await mkdtemp(join(tmpdir(), 'nhp-nats-')));
  const removeStore = () =>
    ownsStore ? rm(storeDir, { recursive: true, force: true }) : Promise.resolve();
  const detached = options.detached ?? false;
  let { child, port } = await launch(binary, options.port ?? -1, storeDir, detached).catch(
    async (err: unknown) => {
      await removeStore();
      throw err;
    },
  );
  let current: ChildProcess | undefined = child;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async stop() {
      await stopChild(current);
      current = undefined;
    },
    async restart() {
      await stopChild(current);
      ({ child, port } = await launch(binary, port, storeDir, detached));
      current = child;
    },
    async kill(signal = 'SIGTERM') {
      const running = current;
      current = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill(signal);
      await exited;
    },
    get pid() {
      return current?.pid;
    },
    async dispose() {
      await stopChild(current);
      current = undefined;
      await removeStore();
    },
  };
}
