import { randomUUID } from 'node:crypto';
import type { Logger } from '@nhp/shared-logger';
import { publishFailed } from '@nhp/shared-messaging';
import { modelOf, translated } from '@nhp/shared-persistence';
import type { Collection, Document } from 'mongodb';
import { Schema, type Connection } from 'mongoose';

/**
 * The journal: audit records and replication events written in the same single-document write as
 * the change they record, without transactions (MongoDB needs a replica set for those).
 *
 * A write goes in three steps:
 * 1. `register(entry, collection, docId)` inserts a pointer. If the process dies before step 2,
 *    the pointer points at nothing and the sweeper drops it once it is older than `staleAfterMs`.
 * 2. The caller's own atomic write carries the entry: `journalPush(entry)` merged into an update,
 *    or `journal: [entry]` in an inserted document. The change and its record land together or not
 *    at all: no change without its record, no record without its change.
 * 3. After the write is acknowledged, `flushSoon` relays the document's pending entries: each is
 *    upserted into `privacy_audit` (idempotent by id; never updated afterwards), its event (if any)
 *    is published (JetStream deduplicates by the event id, sent as Nats-Msg-Id), and only then is
 *    it pulled from the document and its pointer deleted. A crash or a NATS outage anywhere leaves
 *    the entry in the document and the pointer in place, and the sweeper finishes the job later.
 *
 * Entries of one document are relayed in order, and a failed publish stops that document's relay,
 * so its events reach the stream in the order of the changes.
 */

export const AUDIT_COLLECTION = 'privacy_audit';
export const PENDING_COLLECTION = 'privacy_journal_pending';
/** The array field that holds a document's pending entries; readers project it out. */
export const JOURNAL_FIELD = 'journal';

export interface AuditActor {
  /** client: a system's client_id; citizen: a citizen acting for themselves; admin: the admin CLI. */
  kind: 'client' | 'citizen' | 'admin';
  id: string;
}

export interface AuditTarget {
  /** The collection the changed document lives in. */
  collection: string;
  /** The changed record's key in words (e.g. a partKode, a definisjonGuid, "fnr/definisjonGuid"). */
  key: string;
  fnr?: string;
  definisjonGuid?: string;
  partKode?: string;
}

export interface JournalEvent {
  /** Unique per change: the CloudEvent id and the Nats-Msg-Id. */
  id: string;
  subject: string;
  type: string;
  /** ISO 8601 time of the change. */
  time: string;
  data: Record<string, unknown>;
}

export interface JournalEntry {
  id: string;
  at: Date;
  /**
   * Orders entries written in the same millisecond: the time in microseconds plus a per-process
   * counter, so a trail lists one process's records in the order they were made.
   */
  seq: number;
  actor: AuditActor;
  operation: string;
  target: AuditTarget;
  requestId?: string;
  event?: JournalEvent;
}

/** An audit record as stored and listed: the entry, with the id of the event it caused, if any. */
export interface AuditRecord {
  id: string;
  at: Date;
  seq: number;
  actor: AuditActor;
  operation: string;
  target: AuditTarget;
  requestId?: string;
  eventId?: string;
  /** False while the record still waits in the changed document to be relayed. */
  relayed: boolean;
}

export interface NewJournalEntry {
  actor: AuditActor;
  operation: string;
  target: AuditTarget;
  requestId?: string;
  event?: Omit<JournalEvent, 'id' | 'time'> & { time?: string };
}

let sequence = 0;

export function newJournalEntry(input: NewJournalEntry, now: Date = new Date()): JournalEntry {
  const id = randomUUID();
  sequence = (sequence + 1) % 1000;
  const entry: JournalEntry = {
    id,
    at: now,
    seq: now.getTime() * 1000 + sequence,
    actor: input.actor,
    operation: input.operation,
    target: input.target,
  };
  if (input.requestId !== undefined) entry.requestId = input.requestId;
  if (input.event) {
    entry.event = { ...input.event, id, time: input.event.time ?? now.toISOString() };
  }
  return entry;
}

/**
 * The update operator that carries an entry; merge it into the write's update document. Typed
 * loosely (`$push` of any field) so that it merges into the driver's update types of any schema.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function journalPush(entry: JournalEntry): { $push: Record<string, any> } {
  return { $push: { [JOURNAL_FIELD]: entry } };
}

export type AuditFilter = { fnr: string } | { definisjonGuid: string } | { partKode: string };

export interface Journal {
  /** Step 1: the pointer, inserted before the write that carries the entry. */
  register(entry: JournalEntry, collection: string, docId: unknown): Promise<void>;
  /** Step 3: relay the document's pending entries soon; never throws (the sweeper retries). */
  flushSoon(collection: string, docId: unknown): void;
  /** Relays every document with pending entries; returns how many entries were relayed. */
  sweep(): Promise<number>;
  /** Resolves when every relay started so far has finished (tests, shutdown). */
  idle(): Promise<void>;
  /** Periodic sweeps (and one at once), until `stop`. */
  start(): void;
  stop(): Promise<void>;
  /** The audit trail, oldest first, including records not yet relayed. */
  listAudit(filter: AuditFilter, limit?: number): Promise<AuditRecord[]>;
}

export interface CreateJournalOptions {
  connection: Connection;
  /** Publishes a replication event (e.g. to JetStream with Nats-Msg-Id = event.id). */
  publish?: (event: JournalEvent) => Promise<void>;
  logger: Logger;
  /** Default 5000 ms. */
  sweepIntervalMs?: number;
  /** A pointer whose entry never appeared in its document is dropped after this long. Default 60 s. */
  staleAfterMs?: number;
  now?: () => number;
}

interface PendingPointer {
  _id: string;
  collection: string;
  docId: unknown;
  createdAt: Date;
}

const SWEEP_BATCH = 500;

function toAuditRecord(entry: JournalEntry, relayed: boolean): AuditRecord {
  const record: AuditRecord = {
    id: entry.id,
    at: entry.at,
    seq: entry.seq,
    actor: entry.actor,
    operation: entry.operation,
    target: entry.target,
    relayed,
  };
  if (entry.requestId !== undefined) record.requestId = entry.requestId;
  if (entry.event) record.eventId = entry.event.id;
  return record;
}

function matches(target: AuditTarget, filter: AuditFilter): boolean {
  if ('fnr' in filter) return target.fnr === filter.fnr;
  if ('definisjonGuid' in filter) return target.definisjonGuid === filter.definisjonGuid;
  return target.partKode === filter.partKode;
}

function filterQuery(filter: AuditFilter): Record<string, string> {
  if ('fnr' in filter) return { 'target.fnr': filter.fnr };
  if ('definisjonGuid' in filter) return { 'target.definisjonGuid': filter.definisjonGuid };
  return { 'target.partKode': filter.partKode };
}

// Declared for their indexes only (an app builds them before it serves); documents are written
// and read through the driver's collections, exactly as built.
const auditSchema = new Schema(
  { _id: { type: String, required: true } },
  { collection: AUDIT_COLLECTION, versionKey: false, strict: false },
);
auditSchema.index({ 'target.fnr': 1, at: 1 }, { name: 'fnr_at', sparse: true });
auditSchema.index({ 'target.definisjonGuid': 1, at: 1 }, { name: 'definisjon_at', sparse: true });
auditSchema.index({ 'target.partKode': 1, at: 1 }, { name: 'part_at', sparse: true });

const pendingSchema = new Schema(
  { _id: { type: String, required: true } },
  { collection: PENDING_COLLECTION, versionKey: false, strict: false },
);
pendingSchema.index({ createdAt: 1 }, { name: 'created_at' });

/** The journal's models (registered once per connection), with the indexes it needs. */
export function journalModels(connection: Connection) {
  return {
    Audit: modelOf(connection, 'PrivacyAudit', auditSchema),
    Pending: modelOf(connection, 'PrivacyJournalPending', pendingSchema),
  };
}

/** Builds the journal's indexes now (tests and tools; apps build every index at start). */
export async function ensureJournalIndexes(connection: Connection): Promise<void> {
  const { Audit, Pending } = journalModels(connection);
  await translated(async () => {
    await Audit.createIndexes();
    await Pending.createIndexes();
  });
}

export function createJournal(options: CreateJournalOptions): Journal {
  const { connection, logger } = options;
  const now = options.now ?? Date.now;
  const sweepIntervalMs = options.sweepIntervalMs ?? 5000;
  const staleAfterMs = options.staleAfterMs ?? 60_000;
  journalModels(connection);
  const audit = () => connection.collection<Document>(AUDIT_COLLECTION);
  const pending = () => connection.collection<PendingPointer>(PENDING_COLLECTION);

  /** One relay per document at a time, in this process; later requests chain behind it. */
  const chains = new Map<string, Promise<number>>();
  const inFlight = new Set<Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<number> | undefined;

  function keyOf(collection: string, docId: unknown): string {
    return `${collection}\u0000${JSON.stringify(docId)}`;
  }

  async function relayEntry(
    target: Collection<Document>,
    docId: unknown,
    entry: JournalEntry,
  ): Promise<void> {
    const record = toAuditRecord(entry, true);
    const { id, relayed: _relayed, ...fields } = record;
    await audit().updateOne({ _id: id as never }, { $setOnInsert: fields }, { upsert: true });
    if (entry.event && options.publish) {
      // NATS's failure, named as such (not translated as a database error below).
      await options.publish(entry.event).catch((err: unknown) => {
        throw publishFailed(err);
      });
    }
    await target.updateOne({ _id: docId as never }, {
      $pull: { [JOURNAL_FIELD]: { id: entry.id } },
    } as never);
    await pending().deleteOne({ _id: entry.id });
  }

  /** Relays the document's entries in order; stops at the first failure. */
  async function relayDocument(collection: string, docId: unknown): Promise<number> {
    return translated(async () => {
      const target = connection.collection<Document>(collection);
      const doc = await target.findOne(
        { _id: docId as never },
        { projection: { [JOURNAL_FIELD]: 1 } },
      );
      const entries = ((doc?.[JOURNAL_FIELD] as JournalEntry[] | undefined) ?? []).slice();
      for (const entry of entries) await relayEntry(target, docId, entry);
      return entries.length;
    });
  }

  function relay(collection: string, docId: unknown): Promise<number> {
    const key = keyOf(collection, docId);
    const previous = chains.get(key) ?? Promise.resolve(0);
    const next = previous
      .catch(() => 0)
      .then(() => relayDocument(collection, docId))
      .finally(() => {
        if (chains.get(key) === next) chains.delete(key);
      });
    chains.set(key, next);
    return next;
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  async function sweepOnce(): Promise<number> {
    const pointers = await translated(() =>
      pending().find({}).sort({ createdAt: 1 }).limit(SWEEP_BATCH).toArray(),
    );
    const documents = new Map<string, { collection: string; docId: unknown }>();
    for (const p of pointers)
      documents.set(keyOf(p.collection, p.docId), { collection: p.collection, docId: p.docId });
    let relayed = 0;
    for (const { collection, docId } of documents.values()) {
      try {
        relayed += await relay(collection, docId);
      } catch (err) {
        logger.warn({ err, collection }, 'journal relay failed; will retry');
      }
    }
    // A pointer still here after a successful relay of its document names a write that never
    // happened (the process died between the pointer and the write): drop it once it is stale.
    const staleBefore = new Date(now() - staleAfterMs);
    for (const p of pointers) {
      if (p.createdAt >= staleBefore) continue;
      const target = connection.collection<Document>(p.collection);
      const stillPending = await translated(() =>
        target.countDocuments({ _id: p.docId as never, [`${JOURNAL_FIELD}.id`]: p._id }),
      );
      if (stillPending === 0) await translated(() => pending().deleteOne({ _id: p._id }));
    }
    return relayed;
  }

  function sweep(): Promise<number> {
    sweeping ??= track(sweepOnce()).finally(() => {
      sweeping = undefined;
    });
    return sweeping;
  }

  async function idle(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return {
    async register(entry, collection, docId) {
      await translated(() =>
        pending().insertOne({ _id: entry.id, collection, docId, createdAt: new Date(now()) }),
      );
    },

    flushSoon(collection, docId) {
      track(
        relay(collection, docId).catch((err: unknown) => {
          logger.warn({ err, collection }, 'journal relay failed; the sweeper will retry');
          return 0;
        }),
      );
    },

    sweep,
    idle,

    start() {
      if (timer) return;
      const tick = () => {
        sweep().catch((err: unknown) => logger.warn({ err }, 'journal sweep failed'));
      };
      tick();
      timer = setInterval(tick, sweepIntervalMs);
      timer.unref();
    },

    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await idle();
    },

    async listAudit(filter, limit = 1000) {
      // Pointers first: a relay upserts the audit record before it drops the pointer, so every
      // entry is found either through its pointer (pending) or in the audit read that follows.
      const pointers = await translated(() => pending().find({}).limit(SWEEP_BATCH).toArray());
      const stored = await translated(() =>
        audit().find(filterQuery(filter)).sort({ at: 1, seq: 1 }).limit(limit).toArray(),
      );
      const toRecord = (doc: Document): AuditRecord => {
        const { _id, ...fields } = doc as unknown as Omit<AuditRecord, 'id' | 'relayed'> & {
          _id: string;
        };
        return { id: _id, ...fields, relayed: true };
      };
      const records: AuditRecord[] = stored.map(toRecord);
      const seen = new Set(records.map((r) => r.id));
      // Records still waiting in their documents (relay pending after a crash or an outage).
      const relayedMeanwhile: string[] = [];
      for (const p of pointers) {
        if (seen.has(p._id)) continue;
        const doc = await translated(() =>
          connection
            .collection<Document>(p.collection)
            .findOne({ _id: p.docId as never }, { projection: { [JOURNAL_FIELD]: 1 } }),
        );
        const entry = ((doc?.[JOURNAL_FIELD] as JournalEntry[] | undefined) ?? []).find(
          (e) => e.id === p._id,
        );
        if (!entry) relayedMeanwhile.push(p._id);
        else if (matches(entry.target, filter)) records.push(toAuditRecord(entry, false));
      }
      // An entry relayed between the audit read and its document's read is in the audit now.
      if (relayedMeanwhile.length > 0) {
        const late = await translated(() =>
          audit()
            .find({ ...filterQuery(filter), _id: { $in: relayedMeanwhile as never[] } })
            .toArray(),
        );
        records.push(...late.map(toRecord));
      }
      records.sort((a, b) => a.at.getTime() - b.at.getTime() || (a.seq ?? 0) - (b.seq ?? 0));
      return records.slice(0, limit);
    },
  };
}
