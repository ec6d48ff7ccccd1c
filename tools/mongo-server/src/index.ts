// @nhp/mongo-server: a MongoDB-wire-compatible in-memory server for tests and for `npm start` on a
// machine without MongoDB. See README.md for what it supports and what it refuses.
import pino, { type Logger } from 'pino';
import { loadDataFile, Snapshotter } from './persistence';
import { WireServer } from './server';
import { Store } from './store';
import { ttlSweep } from './ttl';

export interface StartOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Load from and snapshot to this file; without it the server is purely in memory. */
  dataFile?: string;
  logger?: Logger;
  /** How often the TTL monitor runs; mongod's default (60 s) unless a test needs it sooner. */
  ttlMonitorIntervalMs?: number;
}

export interface RunningMongoServer {
  uri: string;
  port: number;
  host: string;
  stop(): Promise<void>;
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
  if (opts.dataFile) await loadDataFile(opts.dataFile, store, logger);
  const snapshots = opts.dataFile ? new Snapshotter(opts.dataFile, store, logger) : undefined;
  const server = new WireServer({ store, logger, host, durability: snapshots });
  const port = await server.listen(opts.port ?? 0);
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
        if (snapshots) {
          snapshots.stop();
          await snapshots.flush();
        }
        logger.info({ uri }, 'mongo-server stopped');
      })();
      return stopping;
    },
  };
}

export { MongoServerError, ErrorCodes } from './errors';
