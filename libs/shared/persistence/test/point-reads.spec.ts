import net from 'node:net';
import { monitoredConnection, useTestInfra } from '@nhp/shared-testing';
import { MongoClient, MongoNetworkError, type CommandStartedEvent } from 'mongodb';
import mongoose, { type Connection } from 'mongoose';
import { pointReads, retryableRead } from '../src';

const infra = useTestInfra();

/** Whether a client message is an OP_MSG whose command is `find` (its body's first key). */
function isFind(chunk: Buffer): boolean {
  const OP_MSG = 2013;
  // Header (16 bytes), flag bits (4), section kind 0 (1), document length (4), element type (1).
  return (
    chunk.length > 26 &&
    chunk.readInt32LE(12) === OP_MSG &&
    chunk[20] === 0 &&
    chunk.subarray(26, 31).toString('latin1') === 'find\0'
  );
}

/**
 * A loopback TCP proxy in front of the test database that can cut the connections the next
 * `cuts` find commands arrive on (the command is not forwarded): what a failover or a network
 * fault does to a read in flight. Handshakes and monitoring pass.
 */
async function cuttingProxy(target: URL) {
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (cuts > 0 && isFind(chunk)) {
        cuts--;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cutNext(n: number) {
      cuts = n;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Setting {
  _id: string;
  fnr: string;
  definition: string;
  aktiv: boolean;
}

describe('point reads', () => {
  let conn: Connection;
  beforeAll(async () => {
    conn = await monitoredConnection(infra.get().mongoUri);
    await conn.collection<Setting>('point_reads').insertMany([
      { _id: 's1', fnr: 'a', definition: 'd1', aktiv: true },
      { _id: 's2', fnr: 'a', definition: 'd2', aktiv: false },
    ]);
  });
  afterAll(() => conn.close());

  it('when the filter matches a document, then findOne answers it (projected) through one find command of one document without a cursor', async () => {
    const seen: CommandStartedEvent[] = [];
    const listener = (e: CommandStartedEvent) => {
      if (e.commandName === 'find') seen.push(e);
    };
    conn.getClient().on('commandStarted', listener);
    const reads = pointReads<Setting>(conn, 'point_reads');
    try {
      expect(await reads.findOne({ fnr: 'a', definition: 'd2' })).toEqual({
        _id: 's2',
        fnr: 'a',
        definition: 'd2',
        aktiv: false,
      });
      expect(
        await reads.findOne({ fnr: 'a', definition: 'd1' }, { projection: { aktiv: 1 } }),
      ).toEqual({ _id: 's1', aktiv: true });
      expect(await reads.findOne({ fnr: 'nobody', definition: 'd1' })).toBeNull();
    } finally {
      conn.getClient().off('commandStarted', listener);
    }
    expect(seen).toHaveLength(3);
    expect(seen[1]?.command).toMatchObject({
      find: 'point_reads',
      filter: { fnr: 'a', definition: 'd1' },
      projection: { aktiv: 1 },
      limit: 1,
      singleBatch: true,
      batchSize: 1,
    });
    // A read carries no write concern (see readDb).
    expect(seen[0]?.command['writeConcern']).toBeUndefined();
    // No cursor was left open on the server.
    expect(seen.some((e) => e.commandName === 'killCursors')).toBe(false);
  });

  it('when the client has a read concern, then the command names it, as findOne would inherit it', async () => {
    const majority = await mongoose
      .createConnection(infra.get().mongoUri, {
        monitorCommands: true,
        readConcern: { level: 'majority' },
      })
      .asPromise();
    const seen: CommandStartedEvent[] = [];
    majority.getClient().on('commandStarted', (e) => {
      if (e.commandName === 'find') seen.push(e);
    });
    try {
      const reads = pointReads<Setting>(majority, 'point_reads');
      expect(await reads.findOne({ fnr: 'a', definition: 'd1' })).toMatchObject({ _id: 's1' });
      await majority.collection('point_reads').findOne({ fnr: 'a', definition: 'd1' });
    } finally {
      await majority.close();
    }
    expect(seen.map((e) => e.command['readConcern'])).toEqual([
      { level: 'majority' },
      { level: 'majority' },
    ]);
  });

  describe('when the connection a read goes out on breaks', () => {
    let proxy: Awaited<ReturnType<typeof cuttingProxy>>;
    let client: MongoClient;
    let viaProxy: Connection;
    beforeAll(async () => {
      const target = new URL(infra.get().mongoUri);
      proxy = await cuttingProxy(target);
      const uri = new URL(infra.get().mongoUri);
      uri.host = `127.0.0.1:${proxy.port}`;
      // Polled monitoring, rarely: no heartbeat crosses the proxy while a test cuts.
      const options = {
        directConnection: true,
        serverMonitoringMode: 'poll' as const,
        heartbeatFrequencyMS: 60_000,
      };
      viaProxy = await mongoose.createConnection(uri.toString(), options).asPromise();
      client = await new MongoClient(uri.toString(), options).connect();
    });
    afterAll(async () => {
      await viaProxy.close();
      await client.close();
      await proxy.close();
    });

    it('then the read is sent once more, as the driver retries a read, and answers', async () => {
      const reads = pointReads<Setting>(viaProxy, 'point_reads');
      expect(await reads.findOne({ fnr: 'a', definition: 'd1' })).toMatchObject({ _id: 's1' });
      proxy.cutNext(1);
      expect(await reads.findOne({ fnr: 'a', definition: 'd1' })).toMatchObject({ _id: 's1' });
    });

    it('then a second break fails the read with the network error (one retry, as the driver)', async () => {
      const reads = pointReads<Setting>(viaProxy, 'point_reads');
      proxy.cutNext(2);
      await expect(reads.findOne({ fnr: 'a', definition: 'd1' })).rejects.toBeInstanceOf(
        MongoNetworkError,
      );
      expect(await reads.findOne({ fnr: 'a', definition: 'd1' })).toMatchObject({ _id: 's1' });
    });

    it('then the same command without the retry fails (the break is real)', async () => {
      await client.db().command({ ping: 1 });
      proxy.cutNext(1);
      await expect(
        client.db().command({ find: 'point_reads', filter: {}, limit: 1, singleBatch: true }),
      ).rejects.toBeInstanceOf(MongoNetworkError);
    });
  });

  it('when an error is one the driver retries reads after, then retryableRead says so', () => {
    expect(retryableRead(new MongoNetworkError('closed'))).toBe(true);
    expect(retryableRead(Object.assign(new Error('stepped down'), { code: 189 }))).toBe(true);
    expect(retryableRead(Object.assign(new Error('x'), { code: 10107 }))).toBe(true);
    expect(retryableRead(new Error('not master and secondaryOk=false'))).toBe(true);
    expect(retryableRead(Object.assign(new Error('duplicate'), { code: 11000 }))).toBe(false);
    expect(retryableRead(new Error('bad value'))).toBe(false);
    expect(retryableRead(undefined)).toBe(false);
  });
});
