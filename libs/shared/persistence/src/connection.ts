import mongoose, { type Connection } from 'mongoose';
import type { Logger } from 'pino';

export interface ConnectMongoOptions {
  uri: string;
  logger: Logger;
  /**
   * Let mongoose build the indexes declared in schemas when a model is first used. Off in
   * production, where index builds are a deliberate deploy step (`syncIndexes`).
   */
  autoIndex?: boolean;
  /** How long an operation waits for a reachable server before failing (driver default: 30 s). */
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
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5000,
    appName: options.appName,
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
  logger.info({ db: conn.name }, 'mongodb connected');
  return conn;
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

/**
 * Builds missing indexes and drops the ones no schema declares any more, for every model on the
 * connection. Run at deploy or start (by option), not lazily on first use.
 */
export async function syncIndexes(conn: Connection, logger?: Logger): Promise<void> {
  for (const model of Object.values(conn.models)) {
    const dropped = await model.syncIndexes();
    logger?.info({ model: model.modelName, dropped }, 'indexes in sync');
  }
}

export async function closeMongo(conn: Connection | undefined): Promise<void> {
  if (!conn) return;
  await conn.close();
}
