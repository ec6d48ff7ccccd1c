import { z } from 'zod';

/** NATS subject of the sync-completed event. */
export const SYNC_COMPLETED_SUBJECT = 'refsync.events.sync-completed';
/** CloudEvents `type` of the sync-completed event. */
export const SYNC_COMPLETED_EVENT_TYPE = 'no.nhp.refsync.sync-completed.v1';
/** JetStream stream that captures `refsync.events.>`. */
export const REFSYNC_STREAM = 'REFSYNC_EVENTS';

/**
 * CloudEvent id, also the `Nats-Msg-Id`. A committing run's id depends only on the version, so
 * publishing it twice (outbox retry, second importer) is de-duplicated by JetStream. A no-change
 * run adds its run id so it is never swallowed as a duplicate of the commit it follows.
 */
export function syncCompletedEventId(version: number, runId?: string): string {
  return runId === undefined
    ? `refsync-sync-completed-${version}`
    : `refsync-sync-completed-${version}-unchanged-${runId}`;
}

const count = z.int().min(0);
const isoTime = z.iso.datetime();

export const datasetCountsSchema = z
  .object({
    added: count.meta({
      description: 'Items added, including items that reappeared after deletion.',
    }),
    updated: count.meta({ description: 'Items whose data changed.' }),
    deleted: count.meta({ description: 'Items removed upstream (now tombstones).' }),
    total: count.meta({ description: 'Active (non-deleted) items after the run.' }),
  })
  .meta({ id: 'SyncDatasetCounts', description: 'What one synchronisation did to one dataset.' });
export type DatasetCounts = z.infer<typeof datasetCountsSchema>;

/**
 * Object schemas here strip unknown fields instead of rejecting them: consumers in other services
 * should keep working when a later producer adds a field.
 */
export const syncCompletedEventDataSchema = z
  .object({
    runId: z.string().min(1),
    previousVersion: z.int().min(0),
    currentVersion: z.int().min(0),
    changed: z.boolean().meta({ description: 'true when the run committed a new version.' }),
    // Named (meta id), so that a model generated from the AsyncAPI or OpenAPI document gets a
    // class of this name rather than an anonymous one.
    datasets: z
      .object({
        treatmentGroup: datasetCountsSchema,
        reimbursementGroup: datasetCountsSchema,
      })
      .meta({ id: 'SyncDatasets', description: 'What the run did to each dataset.' }),
    startedAt: isoTime,
    completedAt: isoTime,
    source: z.object({ treatmentGroup: z.string(), reimbursementGroup: z.string() }).meta({
      id: 'SyncSources',
      description: 'Where each dataset was read from (no credentials).',
    }),
  })
  .check((ctx) => {
    const d = ctx.value;
    const expected = d.changed ? d.previousVersion + 1 : d.previousVersion;
    if (d.currentVersion !== expected) {
      ctx.issues.push({
        code: 'custom',
        input: d.currentVersion,
        path: ['currentVersion'],
        message: d.changed
          ? 'a changed run commits exactly previousVersion + 1'
          : 'an unchanged run keeps previousVersion',
      });
    }
    if (!d.changed) {
      for (const dataset of ['treatmentGroup', 'reimbursementGroup'] as const) {
        const c = d.datasets[dataset];
        if (c.added + c.updated + c.deleted > 0) {
          ctx.issues.push({
            code: 'custom',
            input: c,
            path: ['datasets', dataset],
            message: 'an unchanged run has no added, updated or deleted items',
          });
        }
      }
    }
  })
  .meta({
    id: 'SyncCompletedEventData',
    description:
      'data of the sync-completed CloudEvent, published after every synchronisation (also when nothing changed).',
  });
export type SyncCompletedEventData = z.infer<typeof syncCompletedEventDataSchema>;
