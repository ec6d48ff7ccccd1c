import { randomUUID } from 'node:crypto';
import { outboxPush } from '@nhp/shared-outbox';
import { currentTraceCarrier, type TraceCarrier } from '@nhp/shared-tracing';

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

/** A journal entry as the changed document carries it (field `journal`) until it is relayed. */
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
  /**
   * The W3C context of the change (the request's span) while tracing is on: the relay's publish,
   * maybe after a restart, links to it, and the event carries it (CloudEvents `traceparent`).
   */
  trace?: TraceCarrier;
  event?: JournalEvent;
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
  const trace = currentTraceCarrier();
  if (trace.traceparent) entry.trace = trace;
  if (input.event) {
    entry.event = { ...input.event, id, time: input.event.time ?? now.toISOString() };
  }
  return entry;
}

/**
 * The update operator that carries an entry; merge it into the write's update document. Typed
 * loosely (`$push` of any field) so that it merges into the driver's update types of any schema.
 */
export function journalPush(entry: JournalEntry): ReturnType<typeof outboxPush> {
  return outboxPush(JOURNAL_FIELD, entry);
}
