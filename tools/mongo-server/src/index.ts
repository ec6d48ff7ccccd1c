// @nhp/mongo-server: a MongoDB-wire-compatible in-memory server for tests and for `npm start` on a
// machine without MongoDB. See README.md for what it supports and what it refuses.
import pino, { type Logger } from 'pino';
import { Persistence, type JournalOptions, type PersistenceStats } from './persistence';
import { WireServer } from './server';
import { Store } from './store';
import { ttlSweep } from './ttl';

export interface StartOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /**
   * Load from this file and its journal (`<dataFile>.journal.<n>`), and journal every change;
   * without it the server is purely in memory (and refuses `j: true`).
   */
  dataFile?: string;
  /** Journal and compaction settings (defaults: mongod's 100 ms commit interval, 16 MiB). */
  journal?: JournalOptions;
  logger?: Logger;
  /** How often the TTL monitor runs; mongod's default (60 s) unless a test needs it sooner. */
  ttlMonitorIntervalMs?: number;
}

export interface RunningMongoServer {
  uri: string;
  port: number;
  host: string;
  /** Closes sockets and listener, then writes and fsyncs the journal. */
  stop(): Promise<void>;
  /** With a data file: journal counters (fsyncs, ...) and compaction on demand (tests, benchmarks). */
  persistence?: { stats(): PersistenceStats; compact(): Promise<void> };
}

/** mongod's TTL monitor runs every 60 seconds. */
const TTL_INTERVAL_MS = 60_000;
const CURSOR_REAP_INTERVAL_MS = 60_000;

export async function start(opts: StartOptions = {}): Promise<RunningMongoServer> {
  const host = opts.host ?? '127.0.0.1';
  const logger =
    opts.logger ??
    pino({ name: 'mongo-server', level: process.env['MONGO_SERVER_LOG_LEVEL'] ?? 'warn' });
  const store = new Store();
  const persistence = opts.dataFile
    ? await Persistence.open(store, opts.dataFile, logger, opts.journal)
    : undefined;
  const server = new WireServer({ store, logger, host, durability: persistence });
  let port: number;
  try {
    port = await server.listen(opts.port ?? 0);
  } catch (err) {
    await persistence?.close();
    throw err;
  }
  persistence?.finishStartup();
  const timers = [
    setInterval(() => ttlSweep(store, logger), opts.ttlMonitorIntervalMs ?? TTL_INTERVAL_MS),
    setInterval(() => server.cursors.reapIdle(), CURSOR_REAP_INTERVAL_MS),
  ];
  for (const t of timers) t.unref();
  const uriHost = host.includes(':') ? `[${host}]` : host;
  const uri = `mongodb://${uriHost}:${port}`;
  logger.info({ uri, dataFile: opts.dataFile ?? null }, 'mongo-server listening');
  let stopping: Promise<void> | undefined;
  return {
    uri,
    port,
    host,
    stop() {
      stopping ??= (async () => {
        for (const t of timers) clearInterval(t);
        await server.close();
        await persistence?.close();
        logger.info({ uri }, 'mongo-server stopped');
      })();
      return stopping;
    },
    ...(persistence
      ? {
          persistence: {
            stats: () => persistence.stats(),
            compact: () => persistence.compact(),
          },
        }
      : {}),
  };
}

export { MongoServerError, ErrorCodes } from './errors';
export type { CompactionPoint, JournalOptions, PersistenceStats } from './persistence';
export {
  serverNodeArgs,
  startServerProcess,
  type ServerProcess,
  type ServerProcessOptions,
} from './process';
