import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';

/**
 * The method every throughput ratio of the benchmarks uses: the service and its floor (a bare
 * server doing the least such a request needs) share ONE CPU, as in a container with a CPU limit,
 * and are driven AT THE SAME TIME, each by its own autocannon run with the same connections,
 * duration and request bytes. Whatever the machine does meanwhile hits both alike, and neither
 * can borrow a second core (a thread-pool signature check, a GC thread) that a limited container
 * would not have. Every response of both is checked; one wrong answer fails the run, so an error
 * can never count as throughput.
 */

/** Keep-alive connections to each server and seconds per round: the method issue 23 names. */
export const PAIRED_CONNECTIONS = 16;
export const PAIRED_ROUND_S = 4;

/** USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on every common Linux). */
const CLOCK_TICKS_PER_S = 100;

export interface Pinning {
  /** The CPU both measured servers share. */
  serverCpu: string;
  /** Every other CPU: the load generator, the database, NATS. */
  clientCpus: string;
  allCpus: string;
}

/**
 * Servers on the last CPU, everything else on the others. Undefined (no pinning) with `BENCH_PIN=0`,
 * on a one-CPU machine, or without `taskset` (util-linux); the report says so.
 */
export function cpuPinning(): Pinning | undefined {
  const cpus = availableParallelism();
  if (process.env['BENCH_PIN'] === '0' || cpus < 2) return undefined;
  if (spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status !== 0) return undefined;
  return { serverCpu: String(cpus - 1), clientCpus: `0-${cpus - 2}`, allCpus: `0-${cpus - 1}` };
}

export function describePinning(pinning: Pinning | undefined): string {
  return pinning
    ? `pinned: both servers on CPU ${pinning.serverCpu}; load generator, database and NATS on CPU ${pinning.clientCpus}`
    : 'not pinned (BENCH_PIN=0, one CPU, or no taskset): ratios then flatter the service';
}

/** Sets the CPUs of every thread of a running process (this one by default). */
export function pinProcess(cpus: string, pid = process.pid): void {
  spawnSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * Spawns `node <args>` on `cpus` when given (taskset execs node, so the pid is node's), behind
 * `prefix` when given (a command that execs the rest, e.g. a memory limit's: the pid stays node's).
 */
export function spawnNode(
  args: string[],
  options: SpawnOptions,
  cpus?: string,
  prefix: string[] = [],
) {
  const command = [...prefix, process.execPath, ...args];
  if (cpus !== undefined) command.unshift('taskset', '-c', cpus);
  return spawn(command[0] as string, command.slice(1), options);
}

/** CPU time (user + system, every thread) a process has used so far, in ms; 0 if unreadable. */
export function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the parenthesised command name; utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** Resident memory now and its peak (VmHWM), in MB; zeros when the process is gone. */
export function rssOf(pid: number | undefined): { rss: number; peak: number } {
  if (pid === undefined) return { rss: 0, peak: 0 };
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) =>
      Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

export interface PreparedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** One side of a paired round: a server, the requests it gets and how its answers are checked. */
export interface Side<E = unknown> {
  label: string;
  url: string;
  pid: number | undefined;
  /**
   * The i-th request of the round and what its answer must show. (autocannon gives no handle on
   * the connection a request goes out on: the context it passes is a fresh object per request, so
   * a side that must keep two requests apart tracks what is in flight itself, see check.)
   */
  next(i: number): { request: PreparedRequest; expect: E };
  /** Undefined when the answer is right, else what is wrong with it. Called once per answer. */
  check(status: number, body: string, expect: E): string | undefined;
}

export interface SideResult {
  label: string;
  /** Answers per second (all checked). */
  rate: number;
  /** The server's CPU time per answer, in microseconds. */
  cpuUs: number;
  /** The server's CPU time over the round, in ms. */
  cpuMs: number;
  answers: number;
  durationS: number;
}

/**
 * How busy the shared CPU was with the measured servers over a round (1 = the whole CPU). A ratio
 * means what it says only when the servers saturate their CPU: below about 0.9 something else
 * (the load generator, the database, other work on the machine) limited both, which pulls the
 * ratio towards 1. The reports print it beside each ratio.
 */
export function serverCpuShare(results: SideResult[]): number {
  const durationS = Math.max(...results.map((r) => r.durationS));
  return results.reduce((sum, r) => sum + r.cpuMs, 0) / (durationS * 1000);
}

interface AutocannonResult {
  requests: { average: number; total: number };
  errors: number;
  timeouts: number;
}
interface AutocannonContext {
  expect?: unknown;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  overallRate?: number;
  requests: Array<{
    setupRequest: (req: object, context: AutocannonContext) => object;
    onResponse: (status: number, body: string, context: AutocannonContext) => void;
  }>;
}) => Promise<AutocannonResult>;
// autocannon ships no type declarations.
const autocannon = createRequire(__filename)('autocannon') as Autocannon;

/**
 * BENCH_FIXED_RATE (a diagnostic): each side is sent this many requests a second instead of as
 * many as it answers, so that two sides below saturation can be compared by their CPU per request
 * at the same load (what a request costs where nothing queues). Their throughput ratios are then 1
 * by construction and mean nothing.
 */
const FIXED_RATE = Number(process.env['BENCH_FIXED_RATE'] ?? 0) || 0;
if (FIXED_RATE) {
  process.stderr.write(
    `BENCH_FIXED_RATE=${FIXED_RATE}: every side is sent ${FIXED_RATE} req/s; compare CPU per request, not the ratios\n`,
  );
}

async function driveOne<E>(
  side: Side<E>,
  connections: number,
  durationS: number,
): Promise<SideResult> {
  let sent = 0;
  let checked = 0;
  const wrong: string[] = [];
  const cpuBefore = cpuMsOf(side.pid);
  const result = await autocannon({
    url: side.url,
    connections,
    duration: durationS,
    ...(FIXED_RATE ? { overallRate: FIXED_RATE } : {}),
    requests: [
      {
        // One request in flight per connection (no pipelining), so the context holds the
        // expectation of the request its response answers.
        setupRequest: (req, context) => {
          const { request, expect } = side.next(sent++);
          context.expect = expect;
          return { ...req, ...request };
        },
        onResponse: (status, body, context) => {
          checked++;
          const problem = side.check(status, body, context.expect as E);
          if (problem !== undefined && wrong.length < 3) wrong.push(problem);
          else if (problem !== undefined) wrong.push('');
        },
      },
    ],
  });
  const cpuMs = cpuMsOf(side.pid) - cpuBefore;
  const answers = result.requests.total;
  if (wrong.length > 0 || result.errors > 0 || result.timeouts > 0 || checked < answers) {
    throw new Error(
      `${side.label} (${side.url}): ${wrong.length} wrong answers, ${result.errors} errors, ` +
        `${result.timeouts} timeouts, ${checked} of ${answers} checked; first: ${wrong
          .filter(Boolean)
          .join(' | ')}`,
    );
  }
  return {
    label: side.label,
    rate: result.requests.average,
    cpuUs: (cpuMs * 1000) / Math.max(1, answers),
    cpuMs,
    answers,
    durationS,
  };
}

/**
 * Drives every side at once for `durationS`, each with `connections` keep-alive connections, and
 * fails on any wrong answer. The side started first gets a slight head start, so callers alternate
 * the order between rounds (`round`).
 */
export async function driveTogether(
  // Each side checks its own kind of expectation; any is the union of them.
  sides: Side<any>[], // eslint-disable-line @typescript-eslint/no-explicit-any
  options: { connections: number; durationS: number; round?: number },
): Promise<SideResult[]> {
  const order = sides.map((_, i) => i);
  if ((options.round ?? 0) % 2 === 1) order.reverse();
  const results: SideResult[] = new Array(sides.length);
  await Promise.all(
    order.map(async (i) => {
      results[i] = await driveOne(
        sides[i] as Side<unknown>,
        options.connections,
        options.durationS,
      );
    }),
  );
  return results;
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** `value op target` as the reports print it: `0.62 (target >= 0.6) PASS`, `148 MB (target <= 160 MB) PASS`. */
export function verdict(
  value: number,
  op: '>=' | '<=',
  target: number,
  options: { digits?: number; unit?: string } = {},
): string {
  const ok = op === '>=' ? value >= target : value <= target;
  const unit = options.unit ? ` ${options.unit}` : '';
  return `${value.toFixed(options.digits ?? 2)}${unit} (target ${op} ${target}${unit}) ${ok ? 'PASS' : 'FAIL'}`;
}

/** The medians of paired rounds of a service (`app`) against its floor (`bare`). */
export function summariseRounds(results: Array<{ app: SideResult; bare: SideResult }>) {
  return {
    appRate: median(results.map((r) => r.app.rate)),
    appCpuUs: median(results.map((r) => r.app.cpuUs)),
    bareRate: median(results.map((r) => r.bare.rate)),
    bareCpuUs: median(results.map((r) => r.bare.cpuUs)),
    ratios: results.map((r) => r.app.rate / r.bare.rate),
    /** Per round: the service's and the floor's CPU per answer, in microseconds. */
    cpuUsOfRounds: results.map((r) => [r.app.cpuUs, r.bare.cpuUs] as const),
    ratio: median(results.map((r) => r.app.rate / r.bare.rate)),
    cpuShare: median(results.map((r) => serverCpuShare([r.app, r.bare]))),
  };
}
