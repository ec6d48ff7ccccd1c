import { start as startMongoServer, type RunningMongoServer } from '@nhp/mongo-server';
import { AppError } from '@nhp/shared-errors';
import mongoose, { type Connection } from 'mongoose';
import {
  createRefsyncReadRepository,
  DATABASE_ERROR,
  DATABASE_UNAVAILABLE,
  ensureRefsyncIndexes,
  knownDown,
  refsyncStorageError,
} from '../src';

describe('driver errors become AppErrors inside data-access', () => {
  it('when the driver reports a server error (a bug, not an outage), then it is a 500 DATABASE_ERROR', () => {
    const driverError = new mongoose.mongo.MongoServerError({
      message: 'unknown operator: $bogus',
      code: 2,
      codeName: 'BadValue',
    });
    const err = refsyncStorageError(driverError);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: DATABASE_ERROR, status: 500, category: 'internal' });
    expect(err.operational).toBe(false);
    expect(err.cause).toBe(driverError);
  });

  it('when the driver cannot select a server, then it is a 503 DATABASE_UNAVAILABLE a client may read, with Retry-After', () => {
    const driverError = new Error('connect ECONNREFUSED 127.0.0.1:27017');
    driverError.name = 'MongoServerSelectionError';
    const err = refsyncStorageError(driverError);
    expect(err).toMatchObject({
      code: DATABASE_UNAVAILABLE,
      status: 503,
      category: 'unavailable',
      expose: true,
      headers: { 'Retry-After': '5' },
    });
    expect(err.message).not.toContain('27017');
  });
});

describe('when the database is known to be down', () => {
  let server: RunningMongoServer;
  let conn: Connection;

  beforeAll(async () => {
    server = await startMongoServer({ port: 0 });
    // Server selection would wait ten minutes: only the known-down state can answer quickly. A
    // short heartbeat lets the driver notice the outage soon.
    conn = await mongoose
      .createConnection(`${server.uri}/known_down`, {
        bufferCommands: false,
        serverSelectionTimeoutMS: 600_000,
        heartbeatFrequencyMS: 200,
      })
      .asPromise();
    await ensureRefsyncIndexes(conn);
  }, 60_000);

  afterAll(async () => {
    await conn?.close();
    await server?.stop().catch(() => undefined);
  });

  it('when the driver has noticed the outage, then reads reject with 503 DATABASE_UNAVAILABLE without waiting for server selection', async () => {
    const read = createRefsyncReadRepository(conn);
    expect(await read.currentVersion()).toBe(0);
    expect(knownDown(conn)).toBe(false);

    await server.stop();
    while (!knownDown(conn)) await new Promise((resolve) => setTimeout(resolve, 50));

    await expect(read.currentVersion()).rejects.toMatchObject({
      code: DATABASE_UNAVAILABLE,
      status: 503,
    });
    await expect(
      read.scanItems('treatmentGroup', { atVersion: 3 }, () => undefined),
    ).rejects.toMatchObject({ code: DATABASE_UNAVAILABLE });
    // Rule 4 needs no round trip: it is answered even now.
    await expect(
      read.scanItems('treatmentGroup', { atVersion: 3, sinceVersion: 3 }, () => undefined),
    ).resolves.toEqual([]);
    expect(knownDown(conn)).toBe(true);
  }, 60_000);
});
