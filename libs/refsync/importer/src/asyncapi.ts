import { SYNC_COMPLETED_SUBJECT } from '@nhp/refsync-contracts';
import { syncCompletedEvent } from '@nhp/refsync-data-access';
import { asyncApiDocument } from '@nhp/shared-messaging';
import { refsyncStreamSpec } from './events';

/**
 * The AsyncAPI 3 document of the events refsync-importer publishes (served at GET /asyncapi.json
 * on its probe port and written to docs/asyncapi/refsync-importer.json by `npm run asyncapi`): its
 * channel, stream and message come from the event's own definition and stream spec.
 */
export function refsyncAsyncApiDocument() {
  return asyncApiDocument({
    title: 'refsync-importer events',
    version: '1.0.0',
    description:
      'Events refsync-importer publishes on NATS JetStream after every synchronisation of the reference data ' +
      '(treatment groups, reimbursement groups). Each message is a CloudEvent 1.0 in structured mode (the body ' +
      'is the whole event as JSON). Fetch what changed from refsync-api with `sinceVersion`.',
    channels: [
      {
        id: 'syncCompleted',
        address: SYNC_COMPLETED_SUBJECT,
        title: 'Sync completed',
        description:
          'A synchronisation finished: it committed `currentVersion` (`changed: true`) or found nothing to ' +
          'change (`changed: false`, `currentVersion` = `previousVersion`). Then fetch ' +
          '`GET /api/v1/<dataset>?sinceVersion=<the version you stored>` from refsync-api.',
        event: syncCompletedEvent,
        messageName: 'SyncCompletedEvent',
        stream: refsyncStreamSpec,
        delivery:
          'At least once: the event is written in the same document write that commits the version and ' +
          'published until JetStream acknowledges it. A re-publish within the duplicate window is dropped by the ' +
          'stream (Nats-Msg-Id = id: `refsync-sync-completed-<version>`, or with `-unchanged-<runId>` for a run ' +
          'that changed nothing); handle events idempotently by `id` or by `currentVersion`.',
        example: {
          specversion: '1.0',
          id: 'refsync-sync-completed-42',
          source: '/nhp/refsync-importer',
          type: 'no.nhp.refsync.sync-completed.v1',
          time: '2026-11-23T01:00:07.412Z',
          datacontenttype: 'application/json',
          requestid: '1f0c3a55-0f5e-4e0e-9f53-6a3c3f1d2b11',
          data: {
            runId: '1f0c3a55-0f5e-4e0e-9f53-6a3c3f1d2b11',
            previousVersion: 41,
            currentVersion: 42,
            changed: true,
            datasets: {
              treatmentGroup: { added: 1, updated: 3, deleted: 0, total: 61 },
              reimbursementGroup: { added: 2, updated: 5, deleted: 1, total: 340 },
            },
            startedAt: '2026-11-23T01:00:00.103Z',
            completedAt: '2026-11-23T01:00:07.398Z',
            source: {
              treatmentGroup: 'https://upstream.example/treatment-groups.json',
              reimbursementGroup: 'https://upstream.example/reimbursement-groups.json',
            },
          },
        },
      },
    ],
  });
}
