/**
 * The pieces every fault test shares: a cleanup stack run after each test (processes and temp dirs
 * go even when a test fails), a seeded random source (the seed is printed, FAULT_SEED replays it),
 * HTTP calls that never hang, steady load from concurrent clients, and restart cycles.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  startMongoServerProcess,
  startNatsServer,
  type MongoServerProcess,
  type NatsServerProcess,
} from '@nhp/shared-testing';

export { sleep };

/** The spawned apps' log level: warn, or FAULT_LOG_LEVEL (info shows reconnects and relays). */
export const LOG_LEVEL = process.env['FAULT_LOG_LEVEL'] ?? 'warn';

export interface Cleanup {
  add<T>(resource: T, dispose: (r: T) => Promise<unknown>): T;
  /**
   * Aborted when the test is over, before the disposers run: a test that timed out keeps running
   * in the background, and its restart loop must not start a server the cleanup has just removed.
   */
  readonly signal: AbortSignal;
}

/** Registers disposers; they run after each test, newest first, whatever happened. */
export function useCleanup(): Cleanup {
  const stack: Array<() => Promise<unknown>> = [];
  let controller = new AbortController();
  beforeEach(() => {
    controller = new AbortController();
  });
  afterEach(async () => {
    controller.abort(new Error('the test is over'));
    while (stack.length > 0) {
      const dispose = stack.pop() as () => Promise<unknown>;
      await dispose().catch((err: unknown) => {
        process.stderr.write(`cleanup failed: ${String(err)}\n`);
      });
    }
  }, 120_000);
  return {
    add(resource, dispose) {
      stack.push(() => dispose(resource));
      return resource;
    },
    get signal() {
      return controller.signal;
    },
  };
}

export interface Infrastructure {
  mongo: MongoServerProcess;
  nats: NatsServerProcess;
  /** The database the apps under test use. */
  mongoUri: string;
}

/**
 * The infrastructure every fault test starts: the project's MongoDB-wire server in its own process
 * (with a data file, so it can be stopped and started again) and a nats-server, both removed by
 * `cleanup` after the test.
 */
export async function startInfrastructure(cleanup: Cleanup): Promise<Infrastructure> {
  const mongo = cleanup.add(await startMongoServerProcess(), (m) => m.dispose());
  const nats = cleanup.add(await startNatsServer(), (n) => n.dispose());
  return { mongo, nats, mongoUri: `${mongo.uri}/faults` };
}

/** mulberry32: small, seeded, good enough to pick pauses. */
export function seededRandom(label: string): { seed: number; next(): number } {
  const seed = process.env['FAULT_SEED'] ? Number(process.env['FAULT_SEED']) : Date.now() >>> 0;
  process.stdout.write(`${label}: FAULT_SEED=${seed}\n`);
  let a = seed >>> 0;
  return {
    seed,
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

export interface Answer<T = unknown> {
  status: number;
  body: T;
}

/**
 * One HTTP call with a time limit (so a request can never hold up a test), answering the status
 * and the parsed JSON body (undefined when there is none). Network errors reject.
 */
export async function call<T = unknown>(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
  timeoutMs = 5000,
): Promise<Answer<T>> {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, body: body as T };
}

/** `call` that resolves true on the expected status and false on anything else, errors included. */
export async function answers(
  url: string,
  status: number,
  init?: Parameters<typeof call>[1],
  timeoutMs = 2000,
): Promise<boolean> {
  return call(url, init, timeoutMs).then(
    (a) => a.status === status,
    () => false,
  );
}

export interface LoadStats {
  ok: number;
  failed: number;
  /** The first failures, described (status or error), for assertion messages. */
  failures: string[];
}

export interface Load {
  readonly stats: LoadStats;
  /** Ends every client after its current request; resolves with the totals. */
  stop(): Promise<LoadStats>;
}

/**
 * `clients` concurrent loops, each calling `request(client, n)` back to back until stopped. A
 * request that throws counts as failed (its message kept); after a failure a client pauses 20 ms,
 * so an outage does not turn into a busy loop.
 */
export function startLoad(
  clients: number,
  request: (client: number, n: number) => Promise<void>,
): Load {
  const stats: LoadStats = { ok: 0, failed: 0, failures: [] };
  let stopped = false;
  const loops = Array.from({ length: clients }, async (_, client) => {
    for (let n = 0; !stopped; n++) {
      try {
        await request(client, n);
        stats.ok++;
      } catch (err) {
        stats.failed++;
        if (stats.failures.length < 20) {
          stats.failures.push(`client ${client}: ${err instanceof Error ? err.message : err}`);
        }
        await sleep(20);
      }
    }
  });
  return {
    stats,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return stats;
    },
  };
}

/** Throws unless the answer has the status, naming what was asked and what came back. */
export function expectStatus<T>(answer: Answer<T>, status: number, what: string): Answer<T> {
  if (answer.status !== status) {
    throw new Error(
      `${what}: ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300) ?? ''}`,
    );
  }
  return answer;
}

export interface Cycle {
  cycle: number;
  signal: 'SIGTERM' | 'SIGKILL';
  pauseMs: number;
  /** Milliseconds from the server's start to the app serving again; undefined if it did not. */
  servingAfterMs?: number;
}

export interface RestartCyclesOptions {
  cycles: number;
  /** Ends the cycles (throws) once aborted: pass the cleanup's signal. */
  signal: AbortSignal;
  random: { next(): number };
  /** Stops the server with the signal (resolves once it has exited). */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<unknown>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<unknown>;
  /** Resolves true when the app serves (one attempt; must not hang). */
  serving(): Promise<boolean>;
  /** How long after the start the app must serve again. */
  deadlineMs: number;
  /** Longest random pause between stop and start, and time up between cycles. Default 500/400. */
  maxPauseMs?: number;
  maxUpMs?: number;
  /** After a missed deadline, how long to go on polling to tell slow from never. Default 15 s. */
  observeLateMs?: number;
  /** Runs while the server is down (after the stop, before the pause). */
  whileDown?(cycle: number): Promise<void>;
  /** Runs once the app serves again, before the next cycle. */
  afterRecovery?(cycle: number): Promise<void>;
}

/**
 * Stops and starts a server `cycles` times, alternating a clean stop (SIGTERM) and a crash
 * (SIGKILL), with a random pause between; after each start, polls `serving` until it is true or
 * `deadlineMs` has passed (and a while longer, to tell a late recovery from none). Stops at the
 * first cycle the app does not recover in time (further cycles would only add time) and returns
 * every cycle run, so a test asserts on the list.
 */
export async function restartCycles(options: RestartCyclesOptions): Promise<Cycle[]> {
  const done: Cycle[] = [];
  for (let i = 1; i <= options.cycles; i++) {
    const signal = i % 2 === 1 ? 'SIGTERM' : 'SIGKILL';
    const pauseMs = Math.round(options.random.next() * (options.maxPauseMs ?? 500));
    options.signal.throwIfAborted();
    await options.stop(signal);
    await options.whileDown?.(i);
    await sleep(pauseMs);
    options.signal.throwIfAborted();
    await options.start();
    const started = Date.now();
    const cycle: Cycle = { cycle: i, signal, pauseMs };
    done.push(cycle);
    // Past the deadline the cycle has failed; polling on a while tells a slow recovery from none.
    const giveUpMs = options.deadlineMs + (options.observeLateMs ?? 15_000);
    while (Date.now() - started <= giveUpMs) {
      if (await options.serving()) {
        cycle.servingAfterMs = Date.now() - started;
        break;
      }
      await sleep(50);
    }
    if (cycle.servingAfterMs === undefined || cycle.servingAfterMs > options.deadlineMs) break;
    await options.afterRecovery?.(i);
    await sleep(Math.round(options.random.next() * (options.maxUpMs ?? 400)));
  }
  return done;
}

/** One line per run of cycles (stdout), so a run's figures can be read without a debugger. */
export function printCycles(label: string, cycles: Cycle[], load: LoadStats): void {
  const times = cycles.map((c) => c.servingAfterMs ?? 'never').join(' ');
  process.stdout.write(
    `${label}: ${cycles.length} cycles, serving again after (ms): ${times}; ` +
      `load: ${load.ok} ok, ${load.failed} failed\n`,
  );
}

/** The app's last log lines, for the message of a failed assertion. */
export function lastLines(app: { name: string; lines: ReadonlyArray<Record<string, unknown>> }) {
  return `${app.name}, last log lines:\n${app.lines
    .slice(-Number(process.env['FAULT_LOG_LINES'] ?? 25))
    .map((l) => JSON.stringify(l).slice(0, 600))
    .join('\n')}`;
}

/** The cycles in which the app did not serve within the deadline, described. */
export function unrecovered(cycles: Cycle[], deadlineMs: number): string[] {
  return cycles
    .filter((c) => c.servingAfterMs === undefined || c.servingAfterMs > deadlineMs)
    .map(
      (c) =>
        `cycle ${c.cycle} (${c.signal}, paused ${c.pauseMs} ms): ` +
        (c.servingAfterMs === undefined
          ? `not serving ${deadlineMs} ms after the start, nor later while the test watched`
          : `serving only after ${c.servingAfterMs} ms`),
    );
}
