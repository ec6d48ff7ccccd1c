import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { LogCapture, useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  AUDIT_COLLECTION,
  createJournal,
  ensureJournalIndexes,
  journalPush,
  newJournalEntry,
  PENDING_COLLECTION,
  type JournalEvent,
} from '../src';

const infra = useTestInfra();
const logger = createLogger({ name: 'journal-test', level: 'silent' });
const COLLECTION = 'journal_test_docs';

describe('journal: audit records and events written with the change', () => {
  let conn: Connection;
  beforeAll(async () => {
    conn = await connectMongo({ uri: infra.get().mongoUri, logger });
    await ensureJournalIndexes(conn);
  });
  afterAll(() => closeMongo(conn));

  function entryFor(key: string, fnr: string, withEvent = false) {
    return newJournalEntry({
      actor: { kind: 'client', id: 'client-a' },
      operation: 'setting.set',
      target: { collection: COLLECTION, key, fnr, definisjonGuid: 'def-1', partKode: 'p1' },
      requestId: 'req-1',
      event: withEvent
        ? { subject: 'privacy.events.setting-changed.p1', type: 't', data: { k: key } }
        : undefined,
    });
  }

  async function writeWith(docId: string, entry: ReturnType<typeof entryFor>, value: number) {
    await conn
      .collection(COLLECTION)
      .updateOne(
        { _id: docId as never },
        { $set: { value }, ...journalPush(entry) },
        { upsert: true },
      );
  }

  it('when a write carries an entry, then after the relay the audit has it, the event is published and nothing is left pending', async () => {
    const published: JournalEvent[] = [];
    const journal = createJournal({
      connection: conn,
      logger,
      publish: async (e) => void published.push(e),
    });
    const entry = entryFor('doc-1', '13116900216', true);
    await journal.register(entry, COLLECTION, 'doc-1');
    await writeWith('doc-1', entry, 1);
    journal.flushSoon(COLLECTION, 'doc-1');
    await journal.idle();

    expect(published.map((e) => e.id)).toEqual([entry.id]);
    expect(
      await conn.collection(AUDIT_COLLECTION).findOne({ _id: entry.id as never }),
    ).toMatchObject({
      operation: 'setting.set',
      eventId: entry.id,
      target: { fnr: '13116900216' },
    });
    expect(await conn.collection(COLLECTION).findOne({ _id: 'doc-1' as never })).toMatchObject({
      value: 1,
      journal: [],
    });
    expect(
      await conn.collection(PENDING_COLLECTION).countDocuments({ _id: entry.id as never }),
    ).toBe(0);
  });

  it('when publishing fails, then the entry stays pending and a later sweep publishes each event once, in order', async () => {
    let up = false;
    const published: string[] = [];
    const journal = createJournal({
      connection: conn,
      logger,
      publish: async (e) => {
        if (!up) throw new Error('nats down');
        published.push(e.id);
      },
    });
    const first = entryFor('doc-2', '13116900216', true);
    const second = entryFor('doc-2', '13116900216', true);
    for (const [i, entry] of [first, second].entries()) {
      await journal.register(entry, COLLECTION, 'doc-2');
      await writeWith('doc-2', entry, i);
      journal.flushSoon(COLLECTION, 'doc-2');
    }
    await journal.idle();
    expect(published).toEqual([]);
    const pendingDoc = await conn.collection(COLLECTION).findOne({ _id: 'doc-2' as never });
    expect((pendingDoc?.['journal'] as unknown[]).length).toBe(2);
    const trail = await journal.listAudit({ fnr: '13116900216' });
    expect(trail.filter((r) => [first.id, second.id].includes(r.id)).map((r) => r.id)).toEqual([
      first.id,
      second.id,
    ]);

    up = true;
    await journal.sweep();
    expect(published).toEqual([first.id, second.id]);
    await journal.sweep();
    expect(published).toEqual([first.id, second.id]);
    expect(await conn.collection(PENDING_COLLECTION).countDocuments({})).toBe(0);
  });

  it('when NATS does not acknowledge an event, then the relay failure names NATS, not the database', async () => {
    const capture = new LogCapture('warn', 'journal-test');
    const journal = createJournal({
      connection: conn,
      logger: capture.logger,
      publish: async () => {
        throw new Error('TIMEOUT');
      },
    });
    const entry = entryFor('doc-nats', '13116900216', true);
    await journal.register(entry, COLLECTION, 'doc-nats');
    await writeWith('doc-nats', entry, 1);
    journal.flushSoon(COLLECTION, 'doc-nats');
    await journal.idle();
    const failures = capture.lines.filter((l) => /journal relay failed/.test(String(l['msg'])));
    expect(failures).toHaveLength(1);
    const err = failures[0]?.['err'] as { code?: string; message?: string };
    expect(err.code).toBe('MESSAGING_UNAVAILABLE');
    expect(err.message).toMatch(/NATS did not acknowledge the event in time/);
    expect(err.message).not.toMatch(/database/i);
  });

  it('when a pointer names a write that never happened, then the sweeper drops it once stale, and not before', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const journal = createJournal({
      connection: conn,
      logger,
      now: () => clock,
      staleAfterMs: 60_000,
    });
    const entry = entryFor('doc-3', '13116900216');
    await journal.register(entry, COLLECTION, 'doc-3');
    await journal.sweep();
    expect(
      await conn.collection(PENDING_COLLECTION).countDocuments({ _id: entry.id as never }),
    ).toBe(1);
    clock += 61_000;
    await journal.sweep();
    expect(
      await conn.collection(PENDING_COLLECTION).countDocuments({ _id: entry.id as never }),
    ).toBe(0);
    expect(await conn.collection(AUDIT_COLLECTION).countDocuments({ _id: entry.id as never })).toBe(
      0,
    );
  });

  it('when a document and pointer written before the shared outbox hold an entry, then a sweep relays it: audit record, event, entry and pointer gone', async () => {
    const entry = entryFor('doc-old', '13116900216', true);
    // Exactly as the previous journal stored them (raw, not through the journal).
    await conn.collection(PENDING_COLLECTION).insertOne({
      _id: entry.id as never,
      collection: COLLECTION,
      docId: 'doc-old',
      createdAt: new Date(),
    });
    await conn
      .collection(COLLECTION)
      .insertOne({ _id: 'doc-old' as never, value: 9, journal: [entry] });
    const published: JournalEvent[] = [];
    const journal = createJournal({
      connection: conn,
      logger,
      publish: async (e) => void published.push(e),
    });
    expect(
      (await journal.listAudit({ fnr: '13116900216' })).find((r) => r.id === entry.id),
    ).toMatchObject({
      relayed: false,
    });
    expect(await journal.sweep()).toBeGreaterThanOrEqual(1);
    expect(published.filter((e) => e.id === entry.id)).toEqual([entry.event]);
    expect(
      await conn.collection(AUDIT_COLLECTION).findOne({ _id: entry.id as never }),
    ).toMatchObject({
      operation: 'setting.set',
      eventId: entry.id,
    });
    expect(await conn.collection(COLLECTION).findOne({ _id: 'doc-old' as never })).toMatchObject({
      value: 9,
      journal: [],
    });
    expect(
      await conn.collection(PENDING_COLLECTION).countDocuments({ _id: entry.id as never }),
    ).toBe(0);
  });

  it('when the audit trail is listed by definition or party, then records of other targets are left out', async () => {
    const journal = createJournal({ connection: conn, logger });
    const entry = newJournalEntry({
      actor: { kind: 'admin', id: 'cli' },
      operation: 'definition.create',
      target: { collection: COLLECTION, key: 'def-x', definisjonGuid: 'def-x', partKode: 'px' },
    });
    await journal.register(entry, COLLECTION, 'doc-4');
    await writeWith('doc-4', entry, 4);
    journal.flushSoon(COLLECTION, 'doc-4');
    await journal.idle();
    expect((await journal.listAudit({ definisjonGuid: 'def-x' })).map((r) => r.id)).toEqual([
      entry.id,
    ]);
    expect((await journal.listAudit({ partKode: 'px' })).map((r) => r.relayed)).toEqual([true]);
    expect(await journal.listAudit({ definisjonGuid: 'nope' })).toEqual([]);
  });
});
