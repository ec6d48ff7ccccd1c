import net from 'node:net';
import { monitoredConnection, useTestInfra } from '@nhp/shared-testing';
import { MongoClient, MongoNetworkError, type CommandStartedEvent } from 'mongodb';
import mongoose, { type Connection } from 'mongoose';
import { pointReads } from '../src';

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
    });
    // A read carries no write concern.
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

  describe('when reads are coalesced on a unique key', () => {
    const KEY = ['fnr', 'definition'] as const;
    const finds = async <R>(work: () => Promise<R>) => {
      const seen: CommandStartedEvent[] = [];
      const listener = (e: CommandStartedEvent) => {
        if (e.commandName === 'find') seen.push(e);
      };
      conn.getClient().on('commandStarted', listener);
      try {
        return { result: await work(), seen };
      } finally {
        conn.getClient().off('commandStarted', listener);
      }
    };

    it('then reads asked for in one turn go out as one find of the $or of their filters, and each gets the document of its key or null', async () => {
      const reads = pointReads<Setting>(conn, 'point_reads', { coalesceOn: KEY });
      const { result, seen } = await finds(() =>
        Promise.all([
          reads.findOne({ fnr: 'a', definition: 'd2' }),
          reads.findOne({ fnr: 'nobody', definition: 'd1' }),
          reads.findOne({ definition: 'd1', fnr: 'a' }),
          reads.findOne({ fnr: 'a', definition: 'd2' }),
        ]),
      );
      expect(result).toEqual([
        { _id: 's2', fnr: 'a', definition: 'd2', aktiv: false },
        null,
        { _id: 's1', fnr: 'a', definition: 'd1', aktiv: true },
        { _id: 's2', fnr: 'a', definition: 'd2', aktiv: false },
      ]);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.command).toMatchObject({
        find: 'point_reads',
        filter: {
          $or: [
            { fnr: 'a', definition: 'd2' },
            { fnr: 'nobody', definition: 'd1' },
            { definition: 'd1', fnr: 'a' },
          ],
        },
        limit: 3,
        singleBatch: true,
      });
    });

    it('then reads with the same projection share a command, and each projection has its own', async () => {
      const reads = pointReads<Setting>(conn, 'point_reads', { coalesceOn: KEY });
      const excluding = { aktiv: 0 };
      const including = { fnr: 1, definition: 1, aktiv: 1 };
      const { result, seen } = await finds(() =>
        Promise.all([
          reads.findOne({ fnr: 'a', definition: 'd1' }, { projection: excluding }),
          reads.findOne({ fnr: 'a', definition: 'd2' }, { projection: including }),
          reads.findOne({ fnr: 'a', definition: 'd2' }, { projection: excluding }),
          reads.findOne({ fnr: 'a', definition: 'd1' }, { projection: including }),
        ]),
      );
      expect(result).toEqual([
        { _id: 's1', fnr: 'a', definition: 'd1' },
        { _id: 's2', fnr: 'a', definition: 'd2', aktiv: false },
        { _id: 's2', fnr: 'a', definition: 'd2' },
        { _id: 's1', fnr: 'a', definition: 'd1', aktiv: true },
      ]);
      expect(seen.map((e) => [e.command['projection'], e.command['limit']])).toEqual([
        [excluding, 2],
        [including, 2],
      ]);
    });

    it('then a lone read, and a read that cannot be told apart by its key, go out as plain point reads', async () => {
      const reads = pointReads<Setting>(conn, 'point_reads', { coalesceOn: KEY });
      const lone = await finds(() => reads.findOne({ fnr: 'a', definition: 'd1' }));
      expect(lone.result).toMatchObject({ _id: 's1' });
      expect(lone.seen.map((e) => e.command['filter'])).toEqual([{ fnr: 'a', definition: 'd1' }]);
      expect(lone.seen[0]?.command['limit']).toBe(1);

      const { result, seen } = await finds(() =>
        Promise.all([
          // Another field, an operator, a key field left out, and a projection without the key.
          reads.findOne({ fnr: 'a', definition: 'd1', aktiv: true }),
          reads.findOne({ fnr: 'a', definition: { $in: ['d2'] } }),
          reads.findOne({ fnr: 'a' }),
          reads.findOne({ fnr: 'a', definition: 'd2' }, { projection: { aktiv: 1 } }),
        ]),
      );
      expect(result).toEqual([
        { _id: 's1', fnr: 'a', definition: 'd1', aktiv: true },
        { _id: 's2', fnr: 'a', definition: 'd2', aktiv: false },
        expect.objectContaining({ fnr: 'a' }),
        { _id: 's2', aktiv: false },
      ]);
      expect(seen).toHaveLength(4);
      expect(seen.every((e) => e.command['limit'] === 1 && !('$or' in e.command['filter']))).toBe(
        true,
      );
    });

    it('then without coalesceOn every read is its own command', async () => {
      const reads = pointReads<Setting>(conn, 'point_reads');
      const { seen } = await finds(() =>
        Promise.all([
          reads.findOne({ fnr: 'a', definition: 'd1' }),
          reads.findOne({ fnr: 'a', definition: 'd2' }),
        ]),
      );
      expect(seen).toHaveLength(2);
    });
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

    it('then coalesced reads are sent once more together, and a second break fails each with the network error', async () => {
      const reads = pointReads<Setting>(viaProxy, 'point_reads', {
        coalesceOn: ['fnr', 'definition'],
      });
      const both = () =>
        Promise.allSettled([
          reads.findOne({ fnr: 'a', definition: 'd1' }),
          reads.findOne({ fnr: 'a', definition: 'd2' }),
        ]);
      proxy.cutNext(1);
      expect(await both()).toEqual([
        { status: 'fulfilled', value: expect.objectContaining({ _id: 's1' }) },
        { status: 'fulfilled', value: expect.objectContaining({ _id: 's2' }) },
      ]);
      proxy.cutNext(2);
      const failed = await both();
      expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      for (const r of failed) {
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(MongoNetworkError);
      }
    });

    it('then the same command without the retry fails (the break is real)', async () => {
      await client.db().command({ ping: 1 });
      proxy.cutNext(1);
      await expect(
        client.db().command({ find: 'point_reads', filter: {}, limit: 1, singleBatch: true }),
      ).rejects.toBeInstanceOf(MongoNetworkError);
    });
  });
});
