import type { OutboxEvent } from '@nhp/refsync-sync';
import { documentEntries, type DocumentRef } from '@nhp/shared-outbox';
import type { Connection } from 'mongoose';
import { STATE_COLLECTION, STATE_ID, type OutboxEventDoc } from './models';

/** The state document's field that holds the outbox. */
export const OUTBOX_FIELD = 'outbox';

/** The one document whose outbox holds refsync's events. */
export const STATE_DOCUMENT: DocumentRef = { collection: STATE_COLLECTION, docId: STATE_ID };

/**
 * The outbox of the state document, on the shared outbox's entries (`@nhp/shared-outbox`): the
 * commit pushes its event in the same write that moves the version; a published event stays,
 * marked with `publishedAt`, for inspection until `trim` drops it. Driver errors are left for the
 * write repository to translate.
 */
export function stateOutbox(conn: Connection) {
  const entries = documentEntries<OutboxEventDoc>({
    connection: conn,
    field: OUTBOX_FIELD,
    settle: 'mark',
  });
  return {
    /** The `$push` that records the event; merge it into the commit's (or run's) own write. */
    push: (event: OutboxEvent) => entries.push(toOutboxDoc(event)),

    /** Events not yet acknowledged by JetStream, oldest first. */
    async pending(): Promise<OutboxEvent[]> {
      return (await entries.pending(STATE_DOCUMENT))
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
        .map(fromOutboxDoc);
    },

    /** False when the event is unknown or was already marked. */
    markPublished: (id: string, publishedAt: Date) =>
      entries.settle(STATE_DOCUMENT, id, publishedAt),

    /** Drops the oldest published events beyond `keep`; pending events stay. */
    trim: (keep: number) => entries.trimSettled(STATE_DOCUMENT, keep),
  };
}

function toOutboxDoc(event: OutboxEvent): OutboxEventDoc {
  return {
    id: event.id,
    subject: event.subject,
    payload: event.payload,
    createdAt: event.createdAt,
    publishedAt: event.publishedAt ?? null,
  };
}

function fromOutboxDoc(doc: OutboxEventDoc): OutboxEvent {
  return {
    id: doc.id,
    subject: doc.subject,
    payload: doc.payload as object,
    createdAt: doc.createdAt,
    publishedAt: doc.publishedAt ?? null,
  };
}
