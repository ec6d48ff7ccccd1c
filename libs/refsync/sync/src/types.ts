/** What a run takes (its ports and options), what it returns, and what its steps share. */
import { DATASETS, type Dataset, type SyncCompletedEventData } from '@nhp/refsync-contracts';
import type { ChangeSetCounts } from '@nhp/refsync-domain';
import type { OutboxEvent, SyncLogger, SyncStore, UpstreamSource } from './ports';

export interface SyncDependencies {
  store: SyncStore;
  sources: Record<Dataset, UpstreamSource>;
  /** Builds the outbox entry (the full CloudEvent) for the event data; the id is decided here. */
  buildEvent(data: SyncCompletedEventData, options: { id: string; time: Date }): OutboxEvent;
  /** Confirms (and extends) the single-writer lease; throws when it is lost. */
  assertLeader?(): Promise<void>;
  /** The run's logger: its lines already carry the run id, so the sync never adds it again. */
  logger: SyncLogger;
  now?: () => Date;
}

export interface SyncOptions {
  runId: string;
  /** Largest share (0..1) of a dataset's active items one run may delete. */
  maxDeleteShare: number;
  allowMassDelete?: boolean;
  /** Compute and return the change set, write nothing. */
  dryRun?: boolean;
  /** Items per staging write; bounds memory and request size. */
  batchSize?: number;
  /**
   * Up to this many changed items per dataset are kept in memory from the validating pass and
   * staged from there (the usual nightly run); more (an initial import) are read again from the
   * upstream snapshot in a second pass, so memory stays bounded either way.
   */
  maxBufferedChanges?: number;
  /** Test seam: runs after the change set is staged and before the commit. */
  afterStaged?: (info: { nextVersion: number }) => Promise<void>;
}

export interface ChangeIds {
  added: string[];
  changed: string[];
  reappeared: string[];
  deleted: string[];
}

export interface SyncResult {
  runId: string;
  outcome: 'committed' | 'unchanged' | 'dry-run';
  previousVersion: number;
  /** The version readers see after the run. */
  currentVersion: number;
  /** Set when this run committed a version. */
  committedVersion: number | null;
  datasets: Record<Dataset, ChangeSetCounts>;
  sources: Record<Dataset, string>;
  startedAt: Date;
  completedAt: Date;
  /** The event recorded in the outbox (none for a dry run). */
  event?: OutboxEvent;
  /** Only for a dry run: the ids of every change, by kind. */
  changes?: Record<Dataset, ChangeIds>;
  /** Only for a dry run: why the real run would abort (mass-deletion or empty-upstream guards). */
  blockedBy?: string[];
}

/** What every step of one run shares. */
export interface RunContext {
  deps: SyncDependencies;
  options: SyncOptions;
  log: SyncLogger;
  now: () => Date;
  startedAt: Date;
  previousVersion: number;
}

export const byDataset = <T>(value: (dataset: Dataset) => T) =>
  Object.fromEntries(DATASETS.map((d) => [d, value(d)])) as Record<Dataset, T>;
