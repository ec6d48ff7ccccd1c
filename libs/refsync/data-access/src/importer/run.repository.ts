/**
 * One document per importer run, so an operator can see what ran, when, and what it did
 * (`--history`), including runs that were aborted, skipped, or interrupted by a crash.
 */
import type { Dataset } from '@nhp/refsync-contracts';
import type { ChangeSetCounts } from '@nhp/refsync-domain';
import { modelOf, translated } from '@nhp/shared-persistence';
import { Schema, type Connection } from 'mongoose';
import { refsyncStorageError } from '../lib/errors';

export type ImportRunOutcome =
  | 'running'
  | 'committed'
  | 'unchanged'
  | 'dry-run'
  | 'aborted'
  | 'failed'
  | 'skipped'
  | 'interrupted';

export type ImportRunTrigger = 'cli' | 'schedule' | 'http' | 'start';

export interface ImportRun {
  runId: string;
  trigger: ImportRunTrigger;
  dryRun: boolean;
  /** Which importer instance ran it (host and process id). */
  instance: string;
  startedAt: Date;
  endedAt: Date | null;
  outcome: ImportRunOutcome;
  previousVersion: number | null;
  committedVersion: number | null;
  /** Per dataset, the run's change-set counts (records written before 2026-11-23 have `total`). */
  datasets: Partial<Record<Dataset, ChangeSetCounts>> | null;
  error: { reason: string; message: string; details?: string[] } | null;
}

interface ImportRunDocument extends Omit<ImportRun, 'runId'> {
  _id: string;
}

/** Long validation reports are cut here so a run document stays far below MongoDB's size limit. */
export const MAX_STORED_ERROR_DETAILS = 1000;

const importRunSchema = new Schema<ImportRunDocument>(
  {
    _id: { type: String, required: true },
    trigger: { type: String, required: true },
    dryRun: { type: Boolean, required: true },
    instance: { type: String, required: true },
    startedAt: { type: Date, required: true },
    endedAt: { type: Date, default: null },
    outcome: { type: String, required: true },
    previousVersion: { type: Number, default: null },
    committedVersion: { type: Number, default: null },
    datasets: { type: Schema.Types.Mixed, default: null },
    error: { type: Schema.Types.Mixed, default: null },
  },
  { collection: 'refsync_importer_runs', versionKey: false, strict: 'throw', minimize: false },
);
importRunSchema.index({ startedAt: -1 }, { name: 'startedAt_desc' });
importRunSchema.index({ outcome: 1, startedAt: -1 }, { name: 'outcome_startedAt' });

function toRun(doc: ImportRunDocument): ImportRun {
  return {
    runId: doc._id,
    trigger: doc.trigger,
    dryRun: doc.dryRun,
    instance: doc.instance,
    startedAt: doc.startedAt,
    endedAt: doc.endedAt ?? null,
    outcome: doc.outcome,
    previousVersion: doc.previousVersion ?? null,
    committedVersion: doc.committedVersion ?? null,
    datasets: doc.datasets ?? null,
    error: doc.error ?? null,
  };
}

export type ImportRunStart = Pick<
  ImportRun,
  'runId' | 'trigger' | 'dryRun' | 'instance' | 'startedAt'
>;
export type ImportRunFinish = Partial<
  Pick<ImportRun, 'outcome' | 'previousVersion' | 'committedVersion' | 'datasets' | 'error'>
> & { outcome: Exclude<ImportRunOutcome, 'running'>; endedAt: Date };

/** The import runs' model (registered once per connection), with its indexes. */
export function runModel(conn: Connection) {
  return modelOf<ImportRunDocument>(conn, 'RefsyncImporterRun', importRunSchema);
}

export function createRunRepository(conn: Connection) {
  const Runs = runModel(conn);

  // Every driver call is translated where it is made (see ../lib/errors): nothing leaves this
  // module but AppErrors.
  return {
    async start(run: ImportRunStart): Promise<void> {
      await translated(
        () =>
          Runs.create({
            _id: run.runId,
            trigger: run.trigger,
            dryRun: run.dryRun,
            instance: run.instance,
            startedAt: run.startedAt,
            endedAt: null,
            outcome: 'running',
            previousVersion: null,
            committedVersion: null,
            datasets: null,
            error: null,
          }),
        refsyncStorageError,
      );
    },

    /** Records a run that ended before it started its work (e.g. another instance holds the lease). */
    async record(run: ImportRunStart & ImportRunFinish): Promise<void> {
      const { runId, ...rest } = run;
      await translated(
        () =>
          Runs.create({
            _id: runId,
            previousVersion: null,
            committedVersion: null,
            datasets: null,
            error: null,
            ...rest,
            ...(rest.error ? { error: capDetails(rest.error) } : {}),
          }),
        refsyncStorageError,
      );
    },

    async finish(runId: string, result: ImportRunFinish): Promise<void> {
      await translated(
        () =>
          Runs.updateOne(
            { _id: runId },
            { $set: { ...result, ...(result.error ? { error: capDetails(result.error) } : {}) } },
          ).exec(),
        refsyncStorageError,
      );
    },

    /**
     * Marks runs still "running" as interrupted. Called by the lease holder before it syncs: no
     * other importer can be syncing then, so such a record belongs to a process that died.
     */
    async markInterrupted(exceptRunId: string, now = new Date()): Promise<number> {
      const result = await translated(
        () =>
          Runs.updateMany(
            { outcome: 'running', dryRun: false, _id: { $ne: exceptRunId } },
            {
              $set: {
                outcome: 'interrupted',
                endedAt: now,
                error: {
                  reason: 'interrupted',
                  message: 'the importer stopped during this run; a later run cleaned up',
                },
              },
            },
          ).exec(),
        refsyncStorageError,
      );
      return result.modifiedCount;
    },

    async recent(limit = 20): Promise<ImportRun[]> {
      const docs = await translated(
        () =>
          Runs.find()
            .sort({ startedAt: -1, _id: -1 })
            .limit(limit)
            .lean<ImportRunDocument[]>()
            .exec(),
        refsyncStorageError,
      );
      return docs.map(toRun);
    },

    /**
     * When the latest run that committed a version or found nothing to change ended (null before
     * the first): what "the data is current" rests on, whichever instance ran it. One indexed read
     * (`outcome_startedAt`).
     */
    async lastSucceededAt(): Promise<Date | null> {
      const doc = await translated(
        () =>
          Runs.findOne({ outcome: { $in: ['committed', 'unchanged'] } }, { endedAt: 1 })
            .sort({ startedAt: -1, _id: -1 })
            .lean<Pick<ImportRunDocument, '_id' | 'endedAt'>>()
            .exec(),
        refsyncStorageError,
      );
      return doc?.endedAt ?? null;
    },

    async get(runId: string): Promise<ImportRun | null> {
      const doc = await translated(
        () => Runs.findById(runId).lean<ImportRunDocument>().exec(),
        refsyncStorageError,
      );
      return doc ? toRun(doc) : null;
    },
  };
}

function capDetails(error: NonNullable<ImportRun['error']>): NonNullable<ImportRun['error']> {
  if (!error.details || error.details.length <= MAX_STORED_ERROR_DETAILS) return error;
  const more = error.details.length - MAX_STORED_ERROR_DETAILS;
  return {
    ...error,
    details: [...error.details.slice(0, MAX_STORED_ERROR_DETAILS), `… and ${more} more`],
  };
}

export type RunRepository = ReturnType<typeof createRunRepository>;
