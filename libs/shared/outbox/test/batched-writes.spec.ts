import { monitoredConnection, useTestInfra } from '@nhp/shared-testing';
import type { CommandStartedEvent } from 'mongodb';
import type { Connection } from 'mongoose';
import { batchedWrites } from '../src';

const infra = useTestInfra();

describe('batched writes', () => {
  let conn: Connection;
  beforeAll(async () => {
    conn = await monitoredConnection(infra.get().mongoUri);
  });
  afterAll(() => conn.close());

  async function commandsDuring<T>(run: () => Promise<T>): Promise<CommandStartedEvent[]> {
    const seen: CommandStartedEvent[] = [];
    const listener = (e: CommandStartedEvent) => {
      if (['insert', 'update', 'delete'].includes(e.commandName)) seen.push(e);
    };
    conn.getClient().on('commandStarted', listener);
    try {
      await run();
    } finally {
      conn.getClient().off('commandStarted', listener);
    }
    return seen;
  }

  it('when writes to one collection are asked for in the same turn, then one command with the write concern carries them all and each resolves once it is acknowledged', async () => {
    const writes = batchedWrites(conn);
    const commands = await commandsDuring(() =>
      Promise.all([
        writes.write('batched_a', { insertOne: { document: { _id: 'a1' as never, n: 1 } } }),
        writes.write('batched_a', { insertOne: { document: { _id: 'a2' as never, n: 2 } } }),
        writes.write('batched_a', { insertOne: { document: { _id: 'a3' as never, n: 3 } } }),
      ]),
    );
    expect(commands).toHaveLength(1);
    expect(commands[0]?.command['documents']).toHaveLength(3);
    expect(commands[0]?.command['ordered']).toBe(false);
    expect(commands[0]?.command['writeConcern']).toEqual({ w: 'majority', j: true });
    expect(await conn.collection('batched_a').countDocuments({})).toBe(3);
  });

  it('when one statement of a batch fails, then only its caller gets the error (with its code) and the others are written', async () => {
    const writes = batchedWrites(conn);
    await conn.collection('batched_b').insertOne({ _id: 'taken' as never });
    const outcomes = await Promise.allSettled([
      writes.write('batched_b', { insertOne: { document: { _id: 'b1' as never } } }),
      writes.write('batched_b', { insertOne: { document: { _id: 'taken' as never } } }),
      writes.write('batched_b', { deleteOne: { filter: { _id: 'nobody' as never } } }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: 11000 });
    expect(await conn.collection('batched_b').countDocuments({ _id: 'b1' as never })).toBe(1);
  });

  it('when writes go to different collections or come in later turns, then each collection and each turn has its own command', async () => {
    const writes = batchedWrites(conn);
    const commands = await commandsDuring(async () => {
      await Promise.all([
        writes.write('batched_c', { insertOne: { document: { _id: 'c1' as never } } }),
        writes.write('batched_d', { insertOne: { document: { _id: 'd1' as never } } }),
      ]);
      await writes.write('batched_c', { deleteOne: { filter: { _id: 'c1' as never } } });
    });
    expect(commands.map((c) => `${c.commandName} ${String(c.command[c.commandName])}`)).toEqual([
      'insert batched_c',
      'insert batched_d',
      'delete batched_c',
    ]);
    expect(await conn.collection('batched_c').countDocuments({})).toBe(0);
  });

  it("when the batcher is told journal: false, then its commands keep the connection's w and ask for no journal commit, alone or batched", async () => {
    const writes = batchedWrites(conn, { journal: false });
    const commands = await commandsDuring(async () => {
      await writes.write('batched_e', { insertOne: { document: { _id: 'e1' as never } } });
      await Promise.all([
        writes.write('batched_e', { insertOne: { document: { _id: 'e2' as never } } }),
        writes.write('batched_e', { deleteOne: { filter: { _id: 'e1' as never } } }),
      ]);
    });
    expect(commands.map((c) => c.command['writeConcern'])).toEqual([
      { w: 'majority', j: false },
      { w: 'majority', j: false },
      { w: 'majority', j: false },
    ]);
    expect(await conn.collection('batched_e').find({}).toArray()).toEqual([{ _id: 'e2' }]);
  });
});
