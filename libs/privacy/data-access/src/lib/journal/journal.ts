import type { Logger } from '@nhp/shared-logger';
import {
  batchedWrites,
  createOutboxRelay,
  documentEntries,
  documentOutboxStore,
  outboxPointers,
  pointerSchema,
} from '@nhp/shared-outbox';
import { modelOf, mongoIsConnected, translated } from '@nhp/shared-persistence';
import type { Connection } from 'mongoose';
import { auditSchema, auditTrail, type AuditFilter, type AuditRecord } from './audit';
import { JOURNAL_FIELD, type JournalEntry, type JournalEvent } from './entry';

/** Where a journalled event came from: the change's request id and trace context. */
export type JournalEventOrigin = Pick<JournalEntry, 'requestId' | 'trace'>;

/**
 * The journal: audit records and replication events written in the same single-document write as
 * the change they record, without transactions (MongoDB needs a replica set for those). It is
 * privacy's use of the shared outbox (`@nhp/shared-outbox`): entries in the changed document,
 * pointers so that a sweep finds them after a crash, and the audit record as the relay's sink.
 *
 * A write goes in three steps:
 * 1. `register(entry, collection, docId)` inserts a pointer. If the process dies before step 2,
 *    the pointer points at nothing and the sweeper drops it once it is older than `staleAfterMs`;
 *    a write that certainly did not happen (it lost a race) drops its pointer at once (`abandon`).
 *    The pointer is acknowledged without waiting for the journal (`j: false`, the configured `w`
 *    kept): the journaled write of step 2 comes after it in the one ordered journal, so once that
 *    write is acknowledged the pointer is on disk too, and a pointer lost in a crash belonged to
 *    a write that was never acknowledged. A set therefore waits for one journal commit, not two.
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

export const PENDING_COLLECTION = 'privacy_journal_pending';

export interface Journal {
  /** Step 1: the pointer, inserted before the write that carries the entry. */
  register(entry: JournalEntry, collection: string, docId: unknown): Promise<void>;
  /**
   * The write that was to carry the entry certainly did not happen (it lost a race: a duplicate
   * key, a version that changed): its pointer goes at once, instead of pointing at nothing until
   * it is stale, in the way of the sweeps.
   */
  abandon(entry: JournalEntry): Promise<void>;
  /**
   * Step 3: relay the document's pending entries soon; never throws (the sweeper retries).
   * `pending`: the document's `journal` as the acknowledged write returned it, if it did (saves
   * reading it again).
   */
  flushSoon(collection: string, docId: unknown, pending?: readonly JournalEntry[]): void;
  /** Relays every document with pending entries; returns how many entries were relayed. */
  sweep(): Promise<number>;
  /** Resolves when every relay started so far has finished (tests, shutdown). */
  idle(): Promise<void>;
  /** Periodic sweeps (and one at once), until `stop`. */
  start(): void;
  stop(): Promise<void>;
  /** The audit trail, oldest first, including records not yet relayed. */
  listAudit(filter: AuditFilter, limit?: number): Promise<AuditRecord[]>;
  /**
   * Entries not relayed yet and when the oldest was written (from the pointers: a count from
   * metadata and one indexed read), for metrics. Fails at once while MongoDB is known down.
   */
  backlog(): Promise<{ pending: number; oldestCreatedAt: Date | undefined }>;
}

export interface CreateJournalOptions {
  connection: Connection;
  /**
   * Publishes a replication event (e.g. to JetStream with Nats-Msg-Id = event.id); `origin` is the
   * change's request id and trace context, for the event's extension attributes and its span.
   */
  publish?: (event: JournalEvent, origin: JournalEventOrigin) => Promise<void>;
  logger: Logger;
  /** Default 5000 ms. */
  sweepIntervalMs?: number;
  /** A pointer whose entry never appeared in its document is dropped after this long. Default 60 s. */
  staleAfterMs?: number;
  now?: () => number;
}

/** The journal's models (registered once per connection), with the indexes it needs. */
export function journalModels(connection: Connection) {
  return {
    Audit: modelOf(connection, 'PrivacyAudit', auditSchema),
    Pending: modelOf(connection, 'PrivacyJournalPending', pointerSchema(PENDING_COLLECTION)),
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
  const { connection, logger, publish } = options;
  const sweepIntervalMs = options.sweepIntervalMs ?? 5000;
  journalModels(connection);
  // Pointers, audit records and settles of concurrent writes share their commands (those asked
  // for in the same turn of the event loop).
  const writes = batchedWrites(connection);
  // Pointers: see step 1 above. Their deletes too: a delete lost in a crash leaves a pointer to an
  // entry already pulled (or, if the pull was lost as well, relayed again: the audit record is
  // idempotent and the stream drops the repeated event), which the stale sweep drops.
  const pointerWrites = batchedWrites(connection, { journal: false });
  const entries = documentEntries<JournalEntry>({
    connection,
    field: JOURNAL_FIELD,
    settle: 'pull',
  });
  const pointers = outboxPointers({
    connection,
    collection: PENDING_COLLECTION,
    staleAfterMs: options.staleAfterMs ?? 60_000,
    now: options.now,
    writes: pointerWrites,
  });
  const audit = auditTrail(connection, writes);
  const relay = createOutboxRelay<JournalEntry>({
    name: 'journal',
    store: documentOutboxStore({ entries, pointers, writes }),
    sink: (entry) => audit.record(entry),
    publish: async (entry) => {
      if (entry.event && publish) {
        await publish(entry.event, {
          ...(entry.requestId !== undefined ? { requestId: entry.requestId } : {}),
          ...(entry.trace ? { trace: entry.trace } : {}),
        });
      }
    },
    logger,
  });

  return {
    async register(entry, collection, docId) {
      await translated(() => pointers.register(entry.id, { collection, docId }));
    },
    async abandon(entry) {
      await translated(() => pointers.forget(entry.id));
    },
    flushSoon: (collection, docId, pending) => relay.flushSoon({ collection, docId }, pending),
    sweep: async () => (await relay.sweep()).relayed,
    idle: () => relay.idle(),
    start: () => relay.start(sweepIntervalMs),
    stop: () => relay.stop(),
    listAudit: (filter, limit = 1000) =>
      translated(() => audit.list(filter, limit, { entries, pointers })),
    async backlog() {
      if (!mongoIsConnected(connection)) throw new Error('MongoDB is not connected');
      return translated(() => pointers.backlog());
    },
  };
}
