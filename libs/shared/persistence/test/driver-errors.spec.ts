import { AppError } from '@nhp/shared-errors';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { freePort, useTestInfra } from '@nhp/shared-testing';
import mongoose from 'mongoose';
import {
  DATABASE_ERROR,
  DATABASE_UNAVAILABLE,
  DUPLICATE_KEY_CONFLICT,
  toAppError,
  translated,
} from '../src';

const infra = useTestInfra();

describe('driver errors become AppErrors inside the data layer', () => {
  it('when a unique key is written twice, then the error is a 409 conflict with the key pattern', async () => {
    const conn = await mongoose.createConnection(infra.get().mongoUri).asPromise();
    try {
      const coll = conn.collection('driver_errors_dup');
      await coll.createIndex({ key: 1 }, { unique: true });
      await coll.insertOne({ key: 'a' });
      const err = await translated(() => coll.insertOne({ key: 'a' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({
        code: DUPLICATE_KEY_CONFLICT,
        status: 409,
        category: 'conflict',
        expose: false,
        details: { keyPattern: { key: 1 } },
      });
    } finally {
      await conn.close();
    }
  });

  it('when the database cannot be reached, then the error is a 503 unavailable, operational', async () => {
    const port = await freePort();
    const conn = mongoose.createConnection(`mongodb://127.0.0.1:${port}/x`, {
      serverSelectionTimeoutMS: 200,
    });
    conn.on('error', () => undefined);
    try {
      const err = await translated(() => conn.collection('x').findOne({})).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: DATABASE_UNAVAILABLE,
        status: 503,
        category: 'unavailable',
        operational: true,
      });
    } finally {
      await conn.close();
    }
  });

  it('when the server refuses a command for another reason, then it is an internal programmer error', async () => {
    const conn = await mongoose.createConnection(infra.get().mongoUri).asPromise();
    try {
      const err = await translated(() =>
        conn.collection('x').updateOne({}, { $noSuchOperator: { a: 1 } } as never),
      ).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: DATABASE_ERROR,
        status: 500,
        category: 'internal',
        operational: false,
      });
    } finally {
      await conn.close();
    }
  });
});

describe('toAppError on a connection the server ended', () => {
  it('when a write meets a socket ended by the server (EPIPE), bare or as a cause, then it is a 503 unavailable', () => {
    const ended = Object.assign(new Error('This socket has been ended by the other party'), {
      code: 'EPIPE',
    });
    expect(toAppError(ended)).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
    const wrapped = new Error('unexpected error writing to socket', { cause: ended });
    expect(toAppError(wrapped)).toMatchObject({ status: 503, category: 'unavailable' });
    expect(toAppError(new Error('something else'))).toMatchObject({ status: 500 });
  });
});

describe('toAppError on a bulk write whose connection closes', () => {
  /**
   * A TCP proxy to the test server that, once armed, closes every connection on which the client
   * sends anything: the commands in flight lose their connection, as when the server stops.
   */
  async function cuttingProxy(target: URL): Promise<{
    uri: string;
    arm(): void;
    close(): Promise<void>;
  }> {
    let armed = false;
    const sockets = new Set<Socket>();
    const server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      client.on('data', (chunk) => {
        if (armed) {
          client.destroy();
          upstream.destroy();
        } else upstream.write(chunk);
      });
      upstream.on('data', (chunk) => client.write(chunk));
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      uri: `mongodb://127.0.0.1:${port}${target.pathname}`,
      arm: () => (armed = true),
      close: async () => {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('when several bulk writes in flight lose their connections, then each is a 503 unavailable', async () => {
    const proxy = await cuttingProxy(new URL(infra.get().mongoUri));
    // No heartbeats in the way, no retry: each bulk write fails with its own connection.
    const conn = await mongoose
      .createConnection(proxy.uri, { retryWrites: false, heartbeatFrequencyMS: 60_000 })
      .asPromise();
    conn.on('error', () => undefined);
    try {
      const coll = conn.collection('driver_errors_bulk');
      // Two connections in the pool, both used, before the proxy starts cutting.
      await Promise.all([coll.insertOne({ warm: 1 }), coll.insertOne({ warm: 2 })]);
      proxy.arm();
      // The first failure clears the pool; the second is then "stale" to the driver and gets no
      // ResetPool label: all that says "network" is the MongoNetworkError inside the
      // MongoBulkWriteError.
      const errors = await Promise.all(
        [1, 2, 3].map((n) =>
          translated(() =>
            coll.bulkWrite(
              [{ insertOne: { document: { n } } }, { insertOne: { document: { n: -n } } }],
              { ordered: false },
            ),
          ).catch((e: unknown) => e),
        ),
      );
      for (const err of errors) {
        expect(err).toMatchObject({ code: DATABASE_UNAVAILABLE, status: 503 });
      }
      expect(errors.map((e) => (e as AppError).cause)).toContainEqual(
        expect.objectContaining({ name: 'MongoBulkWriteError' }),
      );
    } finally {
      await conn.close(true).catch(() => undefined);
      await proxy.close();
    }
  });
});
