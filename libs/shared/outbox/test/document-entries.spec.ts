import { useTestInfra } from '@nhp/shared-testing';
import type { CommandStartedEvent } from 'mongodb';
import mongoose, { type Connection } from 'mongoose';
import { documentEntries } from '../src';

const infra = useTestInfra();

describe('outbox entries in the changed document', () => {
  let conn: Connection;
  beforeAll(async () => {
    conn = await mongoose
      .createConnection(infra.get().mongoUri, { monitorCommands: true })
      .asPromise();
  });
  afterAll(() => conn.close());

  it('when pending entries are read for a relay, then only majority-committed data is read (no event for a write a failover could roll back)', async () => {
    const entries = documentEntries<{ id: string }>({
      connection: conn,
      field: 'outbox',
      settle: 'pull',
    });
    const ref = { collection: 'entries_rc', docId: 'd1' };
    await conn
      .collection('entries_rc')
      .updateOne(
        { _id: 'd1' as never },
        { $push: entries.push({ id: 'e1' }).$push },
        { upsert: true },
      );
    const finds: CommandStartedEvent[] = [];
    const listener = (e: CommandStartedEvent) => {
      if (e.commandName === 'find') finds.push(e);
    };
    conn.getClient().on('commandStarted', listener);
    try {
      expect((await entries.pending(ref)).map((e) => e.id)).toEqual(['e1']);
    } finally {
      conn.getClient().off('commandStarted', listener);
    }
    expect(finds).toHaveLength(1);
    expect(finds[0]?.command['readConcern']).toEqual({ level: 'majority' });
  });
});
