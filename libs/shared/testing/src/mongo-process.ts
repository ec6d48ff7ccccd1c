import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess, type ServerProcess } from '@nhp/mongo-server';

export interface MongoServerProcess extends ServerProcess {
  /** Stops the process and removes its temporary data directory (if this created it). */
  dispose(): Promise<void>;
}

export interface StartMongoServerProcessOptions {
  /** Kept on dispose. Default: a file in a temporary directory that dispose removes. */
  dataFile?: string;
  /** Default: a free port chosen by the server, reused by `restart()`. */
  port?: number;
  /** Extra CLI flags (`--journal-max-bytes <n>`). */
  args?: string[];
  /** Extra environment (e.g. MONGO_SERVER_TEST_PAUSE_COMPACTION=renamed). */
  env?: Record<string, string>;
}

/**
 * The project's MongoDB-compatible server in its own process (the CLI), for fault tests:
 * `kill('SIGKILL')` crashes it, `kill('SIGTERM')` stops it cleanly, `restart()` starts it again on
 * the same port and data file.
 */
export async function startMongoServerProcess(
  options: StartMongoServerProcessOptions = {},
): Promise<MongoServerProcess> {
  const ownsDir = options.dataFile === undefined;
  const dataDir = ownsDir ? await mkdtemp(join(tmpdir(), 'nhp-mongo-')) : undefined;
  const dataFile = options.dataFile ?? join(dataDir as string, 'mongo.bson');
  const removeDir = () =>
    dataDir ? rm(dataDir, { recursive: true, force: true }) : Promise.resolve();
  let server: ServerProcess;
  try {
    server = await startServerProcess({
      dataFile,
      port: options.port,
      args: options.args,
      env: options.env,
    });
  } catch (err) {
    await removeDir();
    throw err;
  }
  return {
    uri: server.uri,
    port: server.port,
    dataFile,
    get pid() {
      return server.pid;
    },
    get lines() {
      return server.lines;
    },
    waitForLog: (msg) => server.waitForLog(msg),
    kill: (signal) => server.kill(signal),
    restart: (opts) => server.restart(opts),
    stop: () => server.stop(),
    async dispose() {
      await server.stop();
      await removeDir();
    },
  };
}
