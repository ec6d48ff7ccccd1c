/**
 * Ports of the sync use case. Adapters live elsewhere (libs/refsync/sources reads upstream,
 * libs/refsync/data-access writes versions); this lib stays free of I/O so its rules can be
 * tested with plain objects.
 */
import type { Dataset } from '@nhp/refsync-contracts';

/** One element of an upstream file: either a parsed JSON value or why it could not be parsed. */
export interface UpstreamRecord {
  /** 1-based position of the item in the upstream file (array element or non-blank line). */
  readonly index: number;
  /** 1-based line where the item starts, when the format makes that cheap to know. */
  readonly line?: number;
  readonly value?: unknown;
  /** Set when the element is not valid JSON; `value` is then absent. */
  readonly error?: string;
  /**
   * A hash of the element's exact bytes, when the source has them (file and HTTP sources do). Equal
   * bytes mean equal data, so an element whose sourceHash is the committed item's is unchanged and
   * need not be parsed. Sources may compute `value`, `error` and this lazily.
   */
  readonly sourceHash?: string;
}

/**
 * A readable copy of one upstream dataset. `records()` may be iterated more than once (the sync
 * validates in a first pass and stages changed items in a second one, so memory stays bounded by
 * the number of ids, not the size of the data).
 */
export interface UpstreamSnapshot {
  /** Where the data came from, safe to log and to publish (no credentials). */
  readonly description: string;
  records(): AsyncIterable<UpstreamRecord>;
  close(): Promise<void>;
}

export interface UpstreamSource {
  readonly description: string;
  /**
   * `logger` is the run's (its lines carry the run id), for retries and the like; `runId` names
   * the run to the upstream (an HTTP source sends it as X-Request-Id).
   */
  open(context?: { logger?: Pick<SyncLogger, 'warn'>; runId?: string }): Promise<UpstreamSnapshot>;
}

/** What the diff needs of a committed item: never its data. */
export interface CommittedItemRef {
  readonly itemId: string;
  readonly hash: string;
  /** The sourceHash of the record the committed data came from; null or absent when unknown. */
  readonly sourceHash?: string | null;
  readonly isDeleted: boolean;
}

/** An item to write as the next version; a tombstone (isDeleted) omits data and keeps the last committed data. */
export interface StagedChange {
  itemId: string;
  data?: unknown;
  hash?: string;
  /** The sourceHash of the record `data` was parsed from (never of another record). */
  sourceHash?: string;
  isDeleted: boolean;
}

/**
 * An event recorded in the outbox (with the commit that caused it), to be published by the outbox
 * publisher. The one definition: the write repository of @nhp/refsync-data-access stores it, the
 * sync builds it, the importer publishes it.
 */
export interface OutboxEvent {
  /** The CloudEvent id, also the Nats-Msg-Id. */
  id: string;
  subject: string;
  /** The full CloudEvent. */
  payload: object;
  createdAt: Date;
  /** null (or absent) until JetStream acknowledged it. */
  publishedAt?: Date | null;
}

/** The refsync write side, as the sync needs it. */
export interface SyncStore {
  recover(): Promise<{ removed: number; restored: number }>;
  readState(): Promise<{ version: number; committedAt: Date | null }>;
  /** Every committed item of the dataset (tombstones included) at the current version. */
  committedRefs(dataset: Dataset): AsyncIterable<CommittedItemRef>;
  stageChanges(
    nextVersion: number,
    dataset: Dataset,
    changes: StagedChange[],
    committedAt: Date,
  ): Promise<unknown>;
  commit(args: {
    expectedVersion: number;
    nextVersion: number;
    committedAt: Date;
    event: OutboxEvent;
  }): Promise<void>;
  recordUnchangedRun(event: OutboxEvent): Promise<void>;
}

/** Minimal logger shape (pino's). */
export interface SyncLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
