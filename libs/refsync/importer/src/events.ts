import {
  REFSYNC_STREAM,
  SYNC_COMPLETED_SUBJECT,
  type SyncCompletedEventData,
} from '@nhp/refsync-contracts';
import { syncCompletedEvent } from '@nhp/refsync-data-access';
import type { OutboxEvent } from '@nhp/refsync-sync';
import type { StreamSpec } from '@nhp/shared-messaging';

/**
 * The stream downstream services consume from. File storage survives a NATS restart. The duplicate
 * window (an hour, well above the two minutes asked for) covers a re-publish after an importer
 * crash between the ack and marking the event sent; it is not longer because event ids restart
 * with the version numbers if the database is ever rebuilt. 30 days of history let a consumer that
 * was away catch up.
 */
export const refsyncStreamSpec: StreamSpec = {
  name: REFSYNC_STREAM,
  subjects: ['refsync.events.>'],
  storage: 'file',
  duplicateWindowMs: 60 * 60 * 1000,
  maxAgeMs: 30 * 24 * 60 * 60 * 1000,
};

/** The outbox entry the commit writes: the complete CloudEvent, ready to publish as it is. */
export function buildSyncCompletedOutboxEvent(
  data: SyncCompletedEventData,
  options: { id: string; time: Date; requestId?: string },
): OutboxEvent {
  return {
    id: options.id,
    subject: SYNC_COMPLETED_SUBJECT,
    // Built in the run's span: the event carries the run's trace context (CloudEvents
    // `traceparent`/`tracestate`, see defineEvent) and its run id (`requestid`).
    payload: syncCompletedEvent.build(data, {
      id: options.id,
      time: options.time,
      ...(options.requestId ? { requestId: options.requestId } : {}),
    }),
    createdAt: options.time,
    publishedAt: null,
  };
}
