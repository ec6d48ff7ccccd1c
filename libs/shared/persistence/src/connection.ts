import mongoose, { type Connection } from 'mongoose';
import { tracingEnabled } from '@nhp/shared-tracing';
import type { Logger } from 'pino';
import { traceMongoCommands } from './command-spans';

/** The write concern of every write of record (MONGO_WRITE_CONCERN in shared-config). */
export interface WriteConcernOptions {
  w: number | 'majority';
  journal: boolean;
  wtimeoutMS?: number;
}

/**
 * Acknowledged means durable: a majority of the replica set has the write in its on-disk journal
 * (on a standalone server: the journal). Every app, tool and test connects with it unless told
 * otherwise, so no write of record can be answered before it would survive a crash.
 */
export const DURABLE_WRITE_CONCERN: WriteConcernOptions = { w: 'majority', journal: true };

export interface ConnectMongoOptions {
  uri: string;
  logger: Logger;
  /**
   * Let mongoose build the indexes declared in schemas, lazily, when a model is first used (tests
   * and tools). Apps turn it off and build or check their indexes before serving
   * (`prepareIndexes`).
   */
  autoIndex?: boolean;
  /** Default DURABLE_WRITE_CONCERN. */
  writeConcern?: WriteConcernOptions;
  /**
   * How long an operation waits for a usable server before failing (default 1 s, so that during an
   * outage requests answer 503 at once instead of waiting; the driver's default is 30 s).
   */
  serverSelectionTimeoutMS?: number;
  appName?: string;
  /**
   * How long start-up keeps trying to reach MongoDB before giving up (default 30 s). Each attempt
   * waits up to `serverSelectionTimeoutMS`, so a short selection timeout (fast 503s while running)
   * does not also make the process exit when it starts a moment before the database.
   */
  startupTimeoutMs?: number;
  /** Injected for tests; default setTimeout-based sleep. */
  sleep?: (ms: number) => Promise<void>;
}

/** The MongoDB settings every app reads (shared-config's commonEnvShape). */
export interface MongoConfig {
  MONGO_URL: string;
  MONGO_WRITE_CONCERN: WriteConcernOptions;
  MONGO_SERVER_SELECTION_TIMEOUT_MS: number;
}

/**
 * An app's connection options from its configuration. Apps never let mongoose build indexes
 * lazily: they build or check them before serving (`prepareIndexes`).
 */
export function mongoOptionsFromConfig(
  config: MongoConfig,
): Pick<ConnectMongoOptions, 'uri' | 'writeConcern' | 'serverSelectionTimeoutMS' | 'autoIndex'> {
  return {
    uri: config.MONGO_URL,
    writeConcern: config.MONGO_WRITE_CONCERN,
    serverSelectionTimeoutMS: config.MONGO_SERVER_SELECTION_TIMEOUT_MS,
    autoIndex: false,
  };
}

/**
 * Creates a dedicated connection (never the mongoose default singleton), so each app and each
 * test owns its connection's lifecycle. `bufferCommands: false` makes a call during an outage fail
 * fast with a clear error instead of queueing silently until it times out.
 */
export async function connectMongo(options: ConnectMongoOptions): Promise<Connection> {
  const { logger } = options;
  const startupTimeoutMs = options.startupTimeoutMs ?? 30_000;
  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await connectOnce(options);
    } catch (err) {
      if (Date.now() - started >= startupTimeoutMs) throw err;
      logger.warn({ err, attempt }, 'mongodb not reachable yet; retrying');
      await sleep(Math.min(250 * 2 ** (attempt - 1), 2000));
    }
  }
}

async function connectOnce(options: ConnectMongoOptions): Promise<Connection> {
  const { logger } = options;
  const conn = mongoose.createConnection(options.uri, {
    bufferCommands: false,
    autoIndex: options.autoIndex ?? true,
    autoCreate: options.autoIndex ?? true,
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 1000,
    // The driver's monitor checks the server every second (default 10 s). While the connection is
    // known to be down, readiness probes and refsync's reads do not send operations (they would only
    // wait for selection), so nothing else prompts a check: without this an app served again up to
    // 10 s after MongoDB came back. A hello a second per app is negligible.
    heartbeatFrequencyMS: 1000,
    writeConcern: options.writeConcern ?? DURABLE_WRITE_CONCERN,
    // Reads that must see the latest write go to the primary (the default, stated here because
    // a replica set makes it matter: read-your-writes after an acknowledged set).
    readPreference: 'primary',
    // Retryable writes and reads (the driver's defaults): one retry after a failover, which the
    // conditional, idempotent writes of the repositories make safe.
    retryWrites: true,
    retryReads: true,
    appName: options.appName,
    // The events a span per command is made from (command-spans.ts); off, the driver skips them.
    // On, the driver builds them for every command (it has no public switch per command), and
    // command-spans.ts makes a span only of those under a sampled span.
    monitorCommands: tracingEnabled(),
  });
  conn.on('disconnected', () => logger.warn('mongodb disconnected'));
  conn.on('reconnected', () => logger.info('mongodb reconnected'));
  conn.on('error', (err: unknown) => logger.error({ err }, 'mongodb connection error'));
  try {
    await conn.asPromise();
  } catch (err) {
    // A connection whose first attempt failed stays failed: close it and let the caller retry.
    await conn.close().catch(() => undefined);
    throw err;
  }
  if (tracingEnabled()) traceMongoCommands(conn.getClient());
  logger.info({ db: conn.name }, 'mongodb connected');
  return conn;
}

/**
 * Whether the driver holds a usable connection now, as it knows it: no round trip, so it never
 * waits (metrics read it on every scrape). It turns false on the first failed heartbeat (every
 * second) or operation; readiness asks the server itself (mongoPing).
 */
export function mongoIsConnected(conn: Connection | undefined): boolean {
  return conn?.readyState === mongoose.ConnectionStates.connected;
}

/**
 * Readiness check: a round trip to the server. The connection's readyState alone lags behind a
 * dead server until the driver's next heartbeat, so we ask the server itself.
 */
export async function mongoPing(conn: Connection | undefined, timeoutMs = 1500): Promise<boolean> {
  if (!conn || conn.readyState !== mongoose.ConnectionStates.connected || !conn.db) return false;
  try {
    await conn.db.command({ ping: 1 }, { timeoutMS: timeoutMs });
    return true;
  } catch {
    return false;
  }
}

export async function closeMongo(conn: Connection | undefined): Promise<void> {
  if (!conn) return;
  await conn.close();
}
