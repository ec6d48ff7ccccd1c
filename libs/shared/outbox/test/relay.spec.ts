import { createLogger } from '@nhp/shared-logger';
import { MESSAGING_UNAVAILABLE } from '@nhp/shared-messaging';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { LogCapture, useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  createOutboxRelay,
  documentEntries,
  documentOutboxStore,
  outboxPointers,
  type DocumentRef,
  type OutboxStore,
} from '../src';

const infra = useTestInfra();
const logger = createLogger({ name: 'outbox-test', level: 'silent' });
const DOCS = 'outbox_test_docs';
const POINTERS = 'outbox_test_pointers';

interface Entry {
  id: string;
  subject: string;
  createdAt: Date;
  publishedAt?: Date | null;
}

let counter = 0;
const entry = (createdAt = new Date()): Entry => ({
  id: `e-${++counter}`,
  subject: 'test.events.x',
  createdAt,
});

describe('outbox relay: entries in the changed document', () => {
  let conn: Connection;
  beforeAll(async () => {
    conn = await connectMongo({ uri: infra.get().mongoUri, logger });
  });
  afterAll(() => closeMongo(conn));

  /** One "process": its relay over the entries and pointers in the database. */
  function processWith(publish: (e: Entry) => Promise<void>, now = () => Date.now()) {
    const entries = documentEntries<Entry>({ connection: conn, field: 'outbox', settle: 'pull' });
    const pointers = outboxPointers({
      connection: conn,
      collection: POINTERS,
      staleAfterMs: 60_000,
      now,
    });
    const sunk: string[] = [];
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store: documentOutboxStore({ entries, pointers }),
      sink: async (e) => void sunk.push(e.id),
      publish,
      logger,
    });
    /** A change and its entry in one single-document write, the pointer first. */
    async function write(docId: string, e: Entry) {
      const ref = { collection: DOCS, docId };
      await pointers.register(e.id, ref);
      await conn
        .collection(DOCS)
        .updateOne(
          { _id: docId as never },
          { $inc: { changes: 1 }, ...entries.push(e) },
          { upsert: true },
        );
      return ref;
    }
    return { relay, write, sunk, pointers };
  }

  const pointerCount = (id: string) =>
    conn.collection(POINTERS).countDocuments({ _id: id as never });
  const storedEntries = async (docId: string) =>
    ((await conn.collection(DOCS).findOne({ _id: docId as never }))?.['outbox'] as Entry[]).map(
      (e) => e.id,
    );

  it('when the write is acknowledged and flushed, then the entry is sunk, published once, pulled and its pointer gone', async () => {
    const published: string[] = [];
    const p = processWith(async (e) => void published.push(e.id));
    const e = entry();
    const ref = await p.write('doc-1', e);
    p.relay.flushSoon(ref);
    await p.relay.idle();
    expect(p.sunk).toEqual([e.id]);
    expect(published).toEqual([e.id]);
    expect(await storedEntries('doc-1')).toEqual([]);
    expect(await pointerCount(e.id)).toBe(0);
  });

  it('when a publish fails, then that document stops at the entry, the later one waits, and the failure names NATS with its own reason', async () => {
    const capture = new LogCapture('warn', 'outbox-test');
    const published: string[] = [];
    let up = false;
    const entries = documentEntries<Entry>({ connection: conn, field: 'outbox', settle: 'pull' });
    const pointers = outboxPointers({ connection: conn, collection: POINTERS, staleAfterMs: 1 });
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store: documentOutboxStore({ entries, pointers }),
      publish: async (e) => {
        if (!up) throw new Error('NATS is not connected');
        published.push(e.id);
      },
      logger: capture.logger,
    });
    const [first, second] = [entry(), entry()];
    const ref: DocumentRef = { collection: DOCS, docId: 'doc-2' };
    for (const e of [first, second]) {
      await pointers.register(e.id, ref);
      await conn
        .collection(DOCS)
        .updateOne({ _id: 'doc-2' as never }, entries.push(e), { upsert: true });
    }

    const failed = await relay.relay(ref);
    expect(failed).toMatchObject({ relayed: 0, pending: 2, reason: 'NATS is not connected' });
    expect(failed.error?.code).toBe(MESSAGING_UNAVAILABLE);
    expect(published).toEqual([]);
    expect(await storedEntries('doc-2')).toEqual([first.id, second.id]);

    relay.flushSoon(ref);
    await relay.idle();
    const warned = capture.lines.filter(
      (l) => l['msg'] === 'test relay failed; the sweeper will retry',
    );
    expect(warned).toHaveLength(1);
    expect((warned[0]?.['err'] as { code?: string }).code).toBe(MESSAGING_UNAVAILABLE);

    up = true;
    expect(await relay.relay(ref)).toMatchObject({ relayed: 2, pending: 0 });
    expect(published).toEqual([first.id, second.id]);
  });

  it('when the process died after the write and before its relay, then another process sweeps the entry through its pointer, and once only', async () => {
    const published: string[] = [];
    const crashed = processWith(async () => {
      throw new Error('never reached');
    });
    const e = entry();
    await crashed.write('doc-3', e); // acknowledged; the process dies before flushSoon

    const next = processWith(async (x) => void published.push(x.id));
    await next.relay.sweep();
    await next.relay.sweep();
    expect(published).toEqual([e.id]);
    expect(next.sunk).toEqual([e.id]);
    expect(await pointerCount(e.id)).toBe(0);
  });

  it('when the process died between the pointer and the write, then nothing is published and the pointer goes once stale, not before', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const published: string[] = [];
    const p = processWith(
      async (x) => void published.push(x.id),
      () => clock,
    );
    const e = entry();
    await p.pointers.register(e.id, { collection: DOCS, docId: 'doc-never-written' });
    await p.relay.sweep();
    expect(await pointerCount(e.id)).toBe(1);
    clock += 61_000;
    await p.relay.sweep();
    expect(await pointerCount(e.id)).toBe(0);
    expect(published).toEqual([]);
    expect(p.sunk).toEqual([]);
  });
});

describe('outbox relay: a sweep behind many pointers that lead nowhere', () => {
  let conn: Connection;
  beforeAll(async () => {
    conn = await connectMongo({ uri: infra.get().mongoUri, logger });
  });
  afterAll(() => closeMongo(conn));

  it('when a crashed process left several documents, then a sweep relays them side by side, each one in order', async () => {
    const collection = 'outbox_test_pointers_side_by_side';
    const entries = documentEntries<Entry>({ connection: conn, field: 'outbox', settle: 'pull' });
    const pointers = outboxPointers({ connection: conn, collection, staleAfterMs: 60_000 });
    const left: Entry[][] = [];
    for (let d = 0; d < 6; d++) {
      const docId = `doc-side-by-side-${d}`;
      const both = [entry(), entry()];
      for (const e of both) {
        await pointers.register(e.id, { collection: DOCS, docId });
        await conn
          .collection(DOCS)
          .updateOne({ _id: docId as never }, { ...entries.push(e) }, { upsert: true });
      }
      left.push(both);
    }
    let inFlight = 0;
    let most = 0;
    const published: string[] = [];
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store: documentOutboxStore({ entries, pointers }),
      publish: async (x) => {
        most = Math.max(most, ++inFlight);
        // Held until the next turn, so that publishes of other documents can start meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        published.push(x.id);
      },
      logger,
    });
    await relay.sweep();
    expect(most).toBeGreaterThan(1);
    for (const [first, second] of left as Array<[Entry, Entry]>) {
      expect(published.indexOf(first.id)).toBeLessThan(published.indexOf(second.id));
    }
    expect(published).toHaveLength(12);
  });

  it('when more than a page of older pointers name writes that never happened, then one sweep still relays the entry a crashed process left behind them', async () => {
    const collection = 'outbox_test_pointers_nowhere';
    const entries = documentEntries<Entry>({ connection: conn, field: 'outbox', settle: 'pull' });
    const pointers = outboxPointers({ connection: conn, collection, staleAfterMs: 60_000 });
    // 1,200 pointers of writes that lost a race or were cut by a crash: younger than the stale
    // age, so no sweep may drop them yet, and older than the entry below.
    const at = new Date(Date.now() - 1000);
    await conn.collection(collection).insertMany(
      Array.from({ length: 1200 }, (_, i) => ({
        _id: `nowhere-${i}` as never,
        collection: DOCS,
        docId: `doc-never-written-${i}`,
        createdAt: at,
      })),
    );
    // A crashed process's acknowledged write: its pointer, then the document with its entry.
    const e = entry();
    await pointers.register(e.id, { collection: DOCS, docId: 'doc-left-behind' });
    await conn
      .collection(DOCS)
      .updateOne({ _id: 'doc-left-behind' as never }, { ...entries.push(e) }, { upsert: true });

    const published: string[] = [];
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store: documentOutboxStore({ entries, pointers }),
      publish: async (x) => void published.push(x.id),
      logger,
    });
    const summary = await relay.sweep();
    expect(published).toEqual([e.id]);
    expect(summary).toMatchObject({ relayed: 1 });
  });
});

describe('outbox relay: entries marked, in a fixed document', () => {
  let conn: Connection;
  beforeAll(async () => {
    conn = await connectMongo({ uri: infra.get().mongoUri, logger });
  });
  afterAll(() => closeMongo(conn));

  const STATE = 'outbox_test_state';
  const ref: DocumentRef = { collection: STATE, docId: 'state' };

  it('when entries are relayed, then they stay marked published, pending ones are listed, and trimming drops the oldest published only', async () => {
    const entries = documentEntries<Entry>({ connection: conn, field: 'outbox', settle: 'mark' });
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
    // As an existing state document holds them: one already published, two pending.
    const old = { ...entry(at(1)), publishedAt: at(2) };
    const [a, b] = [
      { ...entry(at(3)), publishedAt: null },
      { ...entry(at(4)), publishedAt: null },
    ];
    await conn
      .collection(STATE)
      .insertOne({ _id: 'state' as never, version: 7, outbox: [old, a, b] });
    expect((await entries.pending(ref)).map((e) => e.id)).toEqual([a.id, b.id]);

    const published: string[] = [];
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store: documentOutboxStore({ entries, documents: [ref] }),
      publish: async (e) => {
        published.push(e.id);
        return { duplicate: e.id === b.id };
      },
      logger,
    });
    expect(await relay.sweep()).toEqual({ relayed: 2, duplicates: 1, pending: 0 });
    expect(published).toEqual([a.id, b.id]);
    expect(await entries.pending(ref)).toEqual([]);
    expect(await entries.settle(ref, a.id)).toBe(false);

    expect(await entries.trimSettled(ref, 2)).toBe(1);
    const state = await conn.collection(STATE).findOne({ _id: 'state' as never });
    expect((state?.['outbox'] as Entry[]).map((e) => e.id)).toEqual([a.id, b.id]);
    expect(state?.['version']).toBe(7);
  });
});

describe('outbox relay: retries and the loop', () => {
  function memoryStore(list: Entry[]): OutboxStore<Entry> & { reads: number } {
    const store = {
      reads: 0,
      documents: async () => [{ collection: 'memory', docId: 1 }],
      pending: async () => {
        store.reads += 1;
        return list.filter((e) => !e.publishedAt);
      },
      settle: async (_ref: DocumentRef, e: Entry) => {
        e.publishedAt = new Date();
      },
    };
    return store;
  }

  it('when publishing keeps failing, then relayUntilDone retries until its time is up and reports what is pending', async () => {
    const store = memoryStore([entry()]);
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store,
      publish: async () => {
        throw new Error('NATS is not connected');
      },
      logger,
      onRelayFailed: () => undefined,
      backoff: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    const summary = await relay.relayUntilDone(300);
    expect(summary).toMatchObject({ relayed: 0, pending: 1, reason: 'NATS is not connected' });
    expect(store.reads).toBeGreaterThan(1);
  });

  it('when publishing works again, then relayUntilDone ends with nothing pending', async () => {
    let attempts = 0;
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store: memoryStore([entry(), entry()]),
      publish: async () => {
        attempts += 1;
        if (attempts < 3) throw new Error('TIMEOUT');
      },
      logger,
      onRelayFailed: () => undefined,
      backoff: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    expect(await relay.relayUntilDone(60_000)).toEqual({ relayed: 2, duplicates: 0, pending: 0 });
  });

  it('when a relay is given the entries its write returned, then it relays them without reading the document, unless another relay of the document is under way', async () => {
    const [a, b] = [entry(), entry()];
    const store = memoryStore([a, b]);
    const published: string[] = [];
    const relay = createOutboxRelay<Entry>({
      name: 'test',
      store,
      publish: async (e) => void published.push(e.id),
      logger,
    });
    const ref = { collection: 'memory', docId: 1 };
    expect(await relay.relay(ref, [a])).toEqual({ relayed: 1, duplicates: 0, pending: 0 });
    expect(store.reads).toBe(0);
    // Two at once: the second waits for the first and reads what is left then.
    const first = relay.relay(ref, [b]);
    const second = relay.relay(ref, [b]);
    await first;
    expect(await second).toEqual({ relayed: 0, duplicates: 0, pending: 0 });
    expect(store.reads).toBe(1);
    expect(published).toEqual([a.id, b.id]);
  });

  it('when the loop is kicked, then it sweeps before its interval is over, and stop() ends it', async () => {
    const store = memoryStore([]);
    const relay = createOutboxRelay<Entry>({ name: 'test', store, logger });
    relay.start(3_600_000);
    await new Promise((resolve) => setImmediate(resolve));
    const before = store.reads;
    relay.kick();
    for (let i = 0; i < 100 && store.reads === before; i++)
      await new Promise((resolve) => setImmediate(resolve));
    expect(store.reads).toBe(before + 1);
    await relay.stop();
  });
});
