import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { freePort } from './free-port';
import { NatsServerNotFoundError } from './nats-server';

const HOST = '127.0.0.1';
/** Output kept per node for error messages (the start of a failed launch, the end of a long run). */
const KEEP_OUTPUT = 32_000;

export interface NatsClusterNode {
  /** Its server name (`n1`, `n2`, ...): what JetStream reports as a stream's leader or peer. */
  readonly name: string;
  /** Client port (fixed for the node's life: `restart()` listens on it again). */
  readonly port: number;
  readonly url: string;
  /** Route (cluster) port. */
  readonly clusterPort: number;
  /** HTTP monitoring port (`/healthz`, `/jsz`). */
  readonly monitorPort: number;
  /** Its own JetStream store directory. */
  readonly storeDir: string;
  readonly running: boolean;
  /** The running process's id; undefined while it is down. */
  readonly pid: number | undefined;
  /** The end of its log (stderr), for error messages. */
  output(): string;
  /** A clean stop (SIGTERM); the store stays, so `restart()` brings its replicas back. */
  stop(): Promise<void>;
  /** Sends `signal` (default SIGKILL: a crash) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports with the same store, once it is down. */
  restart(): Promise<void>;
  /** Its `/healthz` answer: 200 once it has a meta leader and its stream replicas are current. */
  healthz(): Promise<{ ok: boolean; body: string }>;
  /** Its `/jsz` document (`?accounts=true&streams=true` with `streams`). */
  jsz(options?: { streams?: boolean }): Promise<Jsz>;
}

/** The part of nats-server's `/jsz` monitoring document these helpers read. */
export interface Jsz {
  meta_cluster?: { name?: string; leader?: string; cluster_size?: number };
  account_details?: Array<{
    stream_detail?: Array<{
      name: string;
      cluster?: { leader?: string };
      state: { messages: number; last_seq: number };
    }>;
  }>;
}

export interface NatsCluster {
  /** The cluster name (`--cluster_name`). */
  readonly name: string;
  /** Every node's client URL, comma-separated: what NATS_URL takes. */
  readonly url: string;
  readonly urls: string[];
  readonly nodes: readonly NatsClusterNode[];
  /** The node with this server name (as in `StreamInfo.cluster.leader`). */
  node(serverName: string): NatsClusterNode;
  /** Resolves with the node every running node names as the JetStream meta leader. */
  waitForMetaLeader(timeoutMs?: number): Promise<NatsClusterNode>;
  /** The node leading `stream` now (`jsm.streams.info(stream).cluster.leader`); undefined: none. */
  streamLeader(stream: string): Promise<NatsClusterNode | undefined>;
  /** Polls until `stream` has a leader (other than `options.not`) and resolves with it. */
  waitForStreamLeader(
    stream: string,
    options?: { not?: NatsClusterNode; timeoutMs?: number },
  ): Promise<NatsClusterNode>;
  /**
   * Moves `stream`'s leadership to `target`: steps the leader down (the other peers elect one of
   * themselves at random) until `target` is elected, at most `attempts` times.
   */
  moveStreamLeader(stream: string, target: NatsClusterNode, attempts?: number): Promise<void>;
  /**
   * Resolves once the cluster has converged: every node running and healthy (`/healthz`), and each
   * of `streams` led, with every replica current and online, and the same messages and last
   * sequence on every node. Rejects with what was still missing after `timeoutMs`.
   */
  waitForConverged(streams: string[], timeoutMs?: number): Promise<void>;
  /** A JetStream manager on a connection of the cluster's own (closed by dispose). */
  jsm(): Promise<JetStreamManager>;
  /** Stops every node and removes the temporary store (a given `storeDir` is kept). */
  dispose(): Promise<void>;
}

export interface StartNatsClusterOptions {
  /** Servers in the cluster; default 3 (the fewest that survive the loss of one). */
  nodes?: number;
  /** Parent of each node's store (`<storeDir>/n1`, ...); kept on dispose. Default: a temp dir. */
  storeDir?: string;
  /** Default: `nhp-test-<random>`. */
  clusterName?: string;
  /**
   * Client ports, one per node (the dev stack asks for fixed ones). Default: each server picks a
   * free port itself (`-p -1`) and reports it; route ports are taken free just before the start.
   */
  clientPorts?: number[];
  /** How long start waits for a JetStream meta leader; default 30 s. */
  startTimeoutMs?: number;
}

interface NodeSpec {
  name: string;
  storeDir: string;
  clusterPort: number;
  clientPort: number;
  monitorPort: number;
}

function requireBinary(): void {
  const found = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  if (found.error) throw new NatsServerNotFoundError();
}

const CLIENT = /Listening for client connections on [^\s]*:(\d+)/;
const MONITOR = /Starting http monitor on [^\s]*:(\d+)/;
const ROUTES = /Listening for route connections on [^\s]*:(\d+)/;

interface Launched {
  child: ChildProcess;
  clientPort: number;
  monitorPort: number;
}

/**
 * Starts one server and resolves once it listens for clients, routes and monitoring. Its log keeps
 * flowing into `log` afterwards (an unread pipe would block the server once full).
 */
function launch(
  spec: NodeSpec,
  clusterName: string,
  routes: string,
  log: (chunk: string) => void,
): Promise<Launched> {
  const args = [
    ...['-a', HOST, '-p', String(spec.clientPort), '-m', String(spec.monitorPort)],
    ...['-n', spec.name, '-js', '-sd', spec.storeDir],
    ...['--cluster_name', clusterName, '--cluster', `nats://${HOST}:${spec.clusterPort}`],
    ...['--routes', routes],
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('nats-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`nats-server ${spec.name} ${message}:\n${output.slice(-KEEP_OUTPUT)}`));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail('did not start within 15 s');
    }, 15_000);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      log(chunk);
      if (settled) return;
      output += chunk;
      const client = CLIENT.exec(output);
      const monitor = MONITOR.exec(output);
      if (client && monitor && ROUTES.test(output) && output.includes('Server is ready')) {
        settled = true;
        clearTimeout(timer);
        resolve({ child, clientPort: Number(client[1]), monitorPort: Number(monitor[1]) });
      }
    });
    child.once('error', (err) => fail(`could not be spawned (${err.message})`));
    child.once('exit', (code, signal) => fail(`exited (${signal ?? code}) before it was ready`));
  });
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function getJson<T>(url: string): Promise<{ status: number; body: T | string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as T };
  } catch {
    return { status: res.status, body: text };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 100 ms until it returns a value; rejects with its last reason at the deadline. */
async function poll<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | string>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not checked yet';
  for (;;) {
    try {
      const result = await check();
      if (typeof result !== 'string') return result;
      last = result;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) throw new Error(`${what} within ${timeoutMs} ms: ${last}`);
    await sleep(100);
  }
}

/**
 * A JetStream cluster of nats-server processes on loopback, for tests that take a node down and
 * for the dev stack's `--ha` topology: each node has its own store directory, routes to every node
 * (a route to itself is dropped by the server), and client, route and monitoring ports that stay
 * the same across `restart()`. Resolves once JetStream has a meta leader.
 */
export async function startNatsCluster(
  options: StartNatsClusterOptions = {},
): Promise<NatsCluster> {
  requireBinary();
  const count = options.nodes ?? 3;
  if (!Number.isInteger(count) || count < 3) {
    throw new Error(`a JetStream cluster that survives the loss of a node needs 3 nodes or more`);
  }
  if (options.clientPorts && options.clientPorts.length !== count) {
    throw new Error(`clientPorts names ${options.clientPorts.length} ports for ${count} nodes`);
  }
  const ownsStore = options.storeDir === undefined;
  const root = options.storeDir ?? (await mkdtemp(join(tmpdir(), 'nhp-nats-cluster-')));
  const clusterName = options.clusterName ?? `nhp-test-${randomBytes(3).toString('hex')}`;
  const removeStore = () => (ownsStore ? rm(root, { recursive: true, force: true }) : undefined);

  const specs: NodeSpec[] = [];
  for (let i = 1; i <= count; i++) {
    const storeDir = join(root, `n${i}`);
    await mkdir(storeDir, { recursive: true });
    specs.push({
      name: `n${i}`,
      storeDir,
      clusterPort: 0,
      clientPort: options.clientPorts?.[i - 1] ?? -1,
      monitorPort: -1,
    });
  }
  const outputs = specs.map(() => '');
  const children: Array<ChildProcess | undefined> = specs.map(() => undefined);
  const logTo = (i: number) => (chunk: string) => {
    outputs[i] = (outputs[i] + chunk).slice(-KEEP_OUTPUT);
  };
  const routesOf = () => specs.map((s) => `nats://${HOST}:${s.clusterPort}`).join(',');

  // Route ports must be known before any node starts (each names all of them), so they are taken
  // free here; another process grabbing one in between fails a start, which is tried again.
  const startAll = async (): Promise<void> => {
    const taken = new Set<number>();
    for (const spec of specs) {
      let port = await freePort();
      while (taken.has(port)) port = await freePort();
      taken.add(port);
      spec.clusterPort = port;
    }
    const routes = routesOf();
    const results = await Promise.allSettled(
      specs.map((spec, i) => launch(spec, clusterName, routes, logTo(i))),
    );
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') children[i] = r.value.child;
    });
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(children.map((c) => c && (c.kill('SIGKILL'), exitOf(c))));
      children.fill(undefined);
      throw failed.reason;
    }
    results.forEach((r, i) => {
      const launched = (r as PromiseFulfilledResult<Launched>).value;
      const spec = specs[i] as NodeSpec;
      spec.clientPort = launched.clientPort;
      spec.monitorPort = launched.monitorPort;
    });
  };
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await startAll();
        break;
      } catch (err) {
        const portTaken = err instanceof Error && /address already in use/i.test(err.message);
        if (!portTaken || attempt >= 3) throw err;
      }
    }
  } catch (err) {
    await removeStore();
    throw err;
  }

  let admin: NatsConnection | undefined;
  let manager: Promise<JetStreamManager> | undefined;

  const nodes: NatsClusterNode[] = specs.map((spec, i) => {
    const monitor = (path: string) => `http://${HOST}:${spec.monitorPort}${path}`;
    const node: NatsClusterNode = {
      name: spec.name,
      get port() {
        return spec.clientPort;
      },
      get url() {
        return `nats://${HOST}:${spec.clientPort}`;
      },
      clusterPort: spec.clusterPort,
      get monitorPort() {
        return spec.monitorPort;
      },
      storeDir: spec.storeDir,
      get running() {
        const c = children[i];
        return c !== undefined && c.exitCode === null && c.signalCode === null;
      },
      get pid() {
        return node.running ? children[i]?.pid : undefined;
      },
      output: () => outputs[i] ?? '',
      async kill(signal: NodeJS.Signals = 'SIGKILL') {
        const child = children[i];
        if (!child || !node.running) return;
        const exited = exitOf(child);
        child.kill(signal);
        await exited;
      },
      async stop() {
        const child = children[i];
        if (!child || !node.running) return;
        const exited = exitOf(child);
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(force);
      },
      async restart() {
        if (node.running) throw new Error(`nats-server ${spec.name} is still running`);
        const launched = await launch(spec, clusterName, routesOf(), logTo(i));
        children[i] = launched.child;
      },
      async healthz() {
        const res = await fetch(monitor('/healthz'), { signal: AbortSignal.timeout(2000) });
        return { ok: res.status === 200, body: await res.text() };
      },
      async jsz(opts = {}) {
        const res = await getJson<Jsz>(
          monitor(opts.streams ? '/jsz?accounts=true&streams=true' : '/jsz'),
        );
        if (typeof res.body === 'string') throw new Error(`/jsz of ${spec.name}: ${res.body}`);
        return res.body;
      },
    };
    return node;
  });

  const byName = (serverName: string): NatsClusterNode => {
    const found = nodes.find((n) => n.name === serverName);
    if (!found) throw new Error(`no node named ${serverName} in cluster ${clusterName}`);
    return found;
  };

  const jsm = (): Promise<JetStreamManager> => {
    manager ??= (async () => {
      admin = await connect({
        servers: nodes.map((n) => n.url),
        name: 'nats-cluster-test-admin',
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        waitOnFirstConnect: true,
      });
      return jetstreamManager(admin, { timeout: 2000, checkAPI: false });
    })().catch((err: unknown) => {
      manager = undefined;
      throw err;
    });
    return manager;
  };

  const streamLeader = async (stream: string) => {
    const info = await (await jsm()).streams.info(stream);
    const leader = info.cluster?.leader;
    return leader ? byName(leader) : undefined;
  };

  const cluster: NatsCluster = {
    name: clusterName,
    get url() {
      return nodes.map((n) => n.url).join(',');
    },
    get urls() {
      return nodes.map((n) => n.url);
    },
    nodes,
    node: byName,
    waitForMetaLeader: (timeoutMs = 30_000) =>
      poll('no JetStream meta leader', timeoutMs, async () => {
        const running = nodes.filter((n) => n.running);
        const views = await Promise.all(running.map((n) => n.jsz()));
        const leaders = new Set(views.map((v) => v.meta_cluster?.leader ?? ''));
        const [leader] = [...leaders];
        if (leaders.size !== 1 || !leader) return `meta leaders seen: ${[...leaders].join(', ')}`;
        const size = views.find((v) => v.meta_cluster?.cluster_size)?.meta_cluster?.cluster_size;
        if (size !== undefined && size !== count) return `cluster size ${size} of ${count}`;
        return byName(leader);
      }),
    streamLeader,
    waitForStreamLeader: (stream, opts = {}) =>
      poll(`no leader of ${stream}`, opts.timeoutMs ?? 30_000, async () => {
        const leader = await streamLeader(stream);
        if (!leader) return 'none';
        if (leader === opts.not) return `still ${leader.name}`;
        return leader;
      }),
    async moveStreamLeader(stream, target, attempts = 30) {
      await jsm();
      for (let attempt = 0; attempt < attempts; attempt++) {
        const leader = await cluster.waitForStreamLeader(stream);
        if (leader === target) return;
        const answer = await (admin as NatsConnection).request(
          `$JS.API.STREAM.LEADER.STEPDOWN.${stream}`,
          '',
          { timeout: 5000 },
        );
        const result = answer.json<{ success?: boolean; error?: { description?: string } }>();
        if (!result.success) {
          throw new Error(`step-down of ${stream} refused: ${result.error?.description}`);
        }
        await cluster.waitForStreamLeader(stream, { not: leader });
      }
      throw new Error(`${stream}'s leadership did not move to ${target.name}`);
    },
    async waitForConverged(streams, timeoutMs = 60_000) {
      await poll('the cluster did not converge', timeoutMs, async () => {
        const down = nodes.filter((n) => !n.running).map((n) => n.name);
        if (down.length > 0) return `down: ${down.join(', ')}`;
        for (const node of nodes) {
          const health = await node.healthz();
          if (!health.ok) return `${node.name} /healthz: ${health.body}`;
        }
        const manager = await jsm();
        for (const stream of streams) {
          const info = await manager.streams.info(stream);
          const replicas = info.cluster?.replicas ?? [];
          if (!info.cluster?.leader) return `${stream} has no leader`;
          if (replicas.length !== info.config.num_replicas - 1) {
            return `${stream} has ${replicas.length + 1} of ${info.config.num_replicas} replicas`;
          }
          const behind = replicas.filter((r) => !r.current || r.offline).map((r) => r.name);
          if (behind.length > 0) return `${stream} replicas not current: ${behind.join(', ')}`;
          // Each node's own copy, as its monitoring port reports it.
          const states = await Promise.all(
            nodes.map(async (n) => {
              const details = (await n.jsz({ streams: true })).account_details ?? [];
              const mine = details
                .flatMap((a) => a.stream_detail ?? [])
                .find((s) => s.name === stream);
              return mine ? `${mine.state.messages}/${mine.state.last_seq}` : 'none';
            }),
          );
          if (new Set(states).size !== 1 || states[0] === 'none') {
            return `${stream} messages/last sequence per node: ${states.join(', ')}`;
          }
        }
        return true;
      });
    },
    jsm,
    async dispose() {
      if (admin) await admin.close().catch(() => undefined);
      await Promise.all(nodes.map((n) => n.stop()));
      await removeStore();
    },
  };

  try {
    await cluster.waitForMetaLeader(options.startTimeoutMs ?? 30_000);
  } catch (err) {
    const logs = nodes.map((n) => `--- ${n.name}\n${n.output().slice(-4000)}`).join('\n');
    await cluster.dispose();
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`);
  }
  return cluster;
}
