import { SYNC_COMPLETED_EVENT_TYPE, syncCompletedEventDataSchema } from '@nhp/refsync-contracts';
import { defineEvent } from '@nhp/shared-messaging';

/** CloudEvents `source` of every event refsync-importer emits. */
const IMPORTER_EVENT_SOURCE = '/nhp/refsync-importer';

/**
 * The sync-completed CloudEvent, defined once: the importer builds it into the outbox entry this
 * storage commits with a version (and publishes it), refsync-api parses it to refresh its version.
 * Here because both may import this lib and `defineEvent` (@nhp/shared-messaging) is not for
 * contracts; the schema and its type are @nhp/refsync-contracts'.
 */
export const syncCompletedEvent = defineEvent({
  type: SYNC_COMPLETED_EVENT_TYPE,
  source: IMPORTER_EVENT_SOURCE,
  dataSchema: syncCompletedEventDataSchema,
});
