import type { AppError } from '@nhp/shared-errors';

/** Every outbox entry has an id: the id of the event it carries and its Nats-Msg-Id. */
export interface OutboxEntry {
  id: string;
}

/** The document that carries entries: the changed document itself. */
export interface DocumentRef {
  collection: string;
  docId: unknown;
}

/** One key per document (relays of one document run one at a time). */
export function documentKey(ref: DocumentRef): string {
  return `${ref.collection}\u0000${JSON.stringify(ref.docId)}`;
}

/**
 * Where an outbox's entries are kept. The relay reads and settles entries only through this port,
 * so a service can keep its entries wherever its write puts them (see `documentOutboxStore` for
 * entries inside the changed documents) and tests can use memory.
 */
export interface OutboxStore<E extends OutboxEntry> {
  /** The documents a sweep visits: every one that may hold pending entries. */
  documents(): Promise<DocumentRef[]>;
  /** The document's pending entries, in the order they must be relayed. */
  pending(ref: DocumentRef): Promise<E[]>;
  /** Records that the entry was relayed; called only after its sink and its publish succeeded. */
  settle(ref: DocumentRef, entry: E): Promise<void>;
  /** Housekeeping at the end of a sweep (pointers whose write never happened). */
  afterSweep?(): Promise<void>;
}

/** What a publish learned from JetStream's acknowledgement. */
export interface PublishOutcome {
  /** The stream already held a message with this Nats-Msg-Id (a re-publish). */
  duplicate: boolean;
}

/** The result of one relay pass (one document, or a sweep over several). */
export interface RelaySummary {
  /** Entries relayed and settled in this pass. */
  relayed: number;
  /** Of those, events JetStream acknowledged as already stored. */
  duplicates: number;
  /** Entries still pending after the pass; undefined when they could not be read. */
  pending: number | undefined;
  /**
   * The first failure; its document's relay stopped there. Named where it arose:
   * MESSAGING_UNAVAILABLE for the publish, a translated database error for the rest.
   */
  error?: AppError;
  /** The failing step's own words (e.g. "NATS is not connected"), for a short report. */
  reason?: string;
}
