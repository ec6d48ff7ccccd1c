import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start as startMongoServer } from '@nhp/mongo-server';
import mongoose from 'mongoose';
import { startNatsServer, type NatsServerProcess } from './nats-server';

export interface TestInfra {
  /** A MongoDB URI that already names this test file's own database. */
  mongoUri: string;
  dbName: string;
  /** The project's server's data file (its journal beside it); undefined with MONGO_URL. */
  mongoDataFile?: string;
  natsUrl: string;
  /** Simulates a NATS outage (only with the spawned server; throws with NATS_URL). */
  stopNats(): Promise<void>;
  startNats(): Promise<void>;
  stop(): Promise<void>;
}

/** Puts `dbName` into a MongoDB URI as its default database, keeping hosts and options. */
export function withDatabase(uri: string, dbName: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]+)(\/[^?]*)?(\?.*)?$/.exec(uri);
  if (!match)
    throw new Error(
      `MONGO_URL is not a MongoDB connection string: ${uri.replace(/\/\/.*@/, '//***@')}`,
    );
  return `${match[1]}/${dbName}${match[3] ?? ''}`;
}

/**
 * Real infrastructure for one test file: MongoDB at MONGO_URL or the project's own
 * MongoDB-compatible server (with a journal in a temporary directory), and NATS at NATS_URL or a spawned nats-server. Each call gets its own
 * database, so test files never see each other's data. `stop()` removes everything it started.
 */
export async function startTestInfra(): Promise<TestInfra> {
  const dbName = `test_${randomBytes(6).toString('hex')}`;
  const cleanups: Array<() => Promise<void>> = [];
  try {
    let mongoUri: string;
    let mongoDataFile: string | undefined;
    const externalMongo = process.env['MONGO_URL'];
    if (externalMongo) {
      mongoUri = withDatabase(externalMongo, dbName);
      cleanups.push(() => dropDatabase(mongoUri));
    } else {
      // With a data file, so that writes with j: true (what the apps ask for) are journaled and
      // fsynced as they would be on a real MongoDB; the directory goes with stop().
      const dataDir = await mkdtemp(join(tmpdir(), 'nhp-mongo-'));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      mongoDataFile = join(dataDir, 'test.bson');
      const server = await startMongoServer({ port: 0, dataFile: mongoDataFile });
      cleanups.push(() => server.stop());
      mongoUri = withDatabase(server.uri, dbName);
    }

    let natsUrl: string;
    let nats: NatsServerProcess | undefined;
    const externalNats = process.env['NATS_URL'];
    if (externalNats) {
      natsUrl = externalNats;
    } else {
      const spawned = await startNatsServer();
      cleanups.push(() => spawned.dispose());
      nats = spawned;
      natsUrl = spawned.url;
    }

    const requireSpawned = (): NatsServerProcess => {
      if (!nats) throw new Error('stopNats/startNats need the spawned nats-server; unset NATS_URL');
      return nats;
    };
    return {
      mongoUri,
      dbName,
      mongoDataFile,
      natsUrl,
      stopNats: () => requireSpawned().stop(),
      startNats: () => requireSpawned().restart(),
      stop: () => runCleanups(cleanups),
    };
  } catch (err) {
    await runCleanups(cleanups);
    throw err;
  }
}

async function runCleanups(cleanups: Array<() => Promise<void>>): Promise<void> {
  for (const cleanup of cleanups.reverse()) {
    await cleanup().catch(() => undefined);
  }
  cleanups.length = 0;
}

async function dropDatabase(uri: string): Promise<void> {
  const conn = await mongoose.createConnection(uri, { serverSelectionTimeoutMS: 5000 }).asPromise();
  try {
    await conn.dropDatabase();
  } finally {
    await conn.close();
  }
}

/**
 * Jest wiring: starts the infrastructure before the file's tests and stops it after them.
 * Read the values inside tests or hooks (`infra.get().mongoUri`), not at module load.
 */
export function useTestInfra(): { get(): TestInfra } {
  let infra: TestInfra | undefined;
  beforeAll(async () => {
    infra = await startTestInfra();
  }, 60_000);
  afterAll(async () => {
    await infra?.stop();
  }, 60_000);
  return {
    get() {
      if (!infra) throw new Error('test infrastructure is not started (use inside tests or hooks)');
      return infra;
    },
  };
}
