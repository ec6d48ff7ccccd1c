import type { Dataset } from '@nhp/refsync-contracts';
import { duplicateKeyInfo, translated } from '@nhp/shared-persistence';
import type { OutboxEvent } from '@nhp/refsync-sync';
import type { Connection } from 'mongoose';
import { refsyncStorageError, versionConflict } from './errors';
import { refsyncModels, STATE_ID } from './models';
import { stateOutbox } from './outbox';
import type { RefsyncState } from './read-repository';
import { createStaging, type Staging } from './staging';

/** The one outbox entry type is the sync's port; this repository stores it in the state document. */
export type { OutboxEvent };
export {
  STAGE_BATCH_SIZE,
  type CommittedItem,
  type CommittedItemRef,
  type RecoverResult,
  type StagedItemChange,
  type StageResult,
} from './staging';

export interface CommitInput {
  expectedVersion: number;
  nextVersion: number;
  committedAt: Date;
  event: OutboxEvent;
}

export interface PruneOptions {
  /**
   * Accepted for compatibility and validated (>= 0). Item storage has nothing to prune any more:
   * an item is one document whose `prev` is overwritten by its next change.
   */
  graceVersions?: number;
  /** Published outbox events kept for inspection (default 100); pending events are never pruned. */
  keepPublishedEvents?: number;
}

/** Staging (./staging) and the state document: the commit and the outbox (./outbox). */
export interface RefsyncWriteRepository extends Staging {
  readState(): Promise<RefsyncState>;
  /** Makes `nextVersion` visible and records its event, in one document write. */
  commit(input: CommitInput): Promise<void>;
  /** Records the event of a run that changed nothing; the version stays. Idempotent per event id. */
  recordUnchangedRun(event: OutboxEvent): Promise<void>;
  /** Events not yet acknowledged by JetStream, oldest first. */
  pendingEvents(): Promise<OutboxEvent[]>;
  /** Returns false when the event is unknown or was already marked. */
  markEventPublished(id: string, publishedAt?: Date): Promise<boolean>;
  /**
   * Trims published outbox events beyond `keepPublishedEvents`. Returns the number of item
   * documents deleted, which is always 0 now (one document per item; nothing is superseded).
   */
  prune(options?: PruneOptions): Promise<number>;
}

/**
 * Every method rejects with an AppError (see ./errors): REFSYNC_VERSION_CONFLICT,
 * REFSYNC_STAGING_REJECTED, or a translated driver error (503 DATABASE_UNAVAILABLE, 500
 * DATABASE_ERROR). Argument checks that catch a programmer error stay RangeErrors.
 */
export function createRefsyncWriteRepository(conn: Connection): RefsyncWriteRepository {
  const repo = createUntranslatedWriteRepository(conn);
  return {
    recover: () => translated(() => repo.recover(), refsyncStorageError),
    readState: () => translated(() => repo.readState(), refsyncStorageError),
    committedItems: ((dataset: Dataset, options?: { includeData: false }) =>
      translatedIterable(
        options ? repo.committedItems(dataset, options) : repo.committedItems(dataset),
      )) as RefsyncWriteRepository['committedItems'],
    committedRefs: (dataset) => translatedIterable(repo.committedRefs(dataset)),
    stageChanges: (nextVersion, dataset, changes, committedAt) =>
      translated(
        () => repo.stageChanges(nextVersion, dataset, changes, committedAt),
        refsyncStorageError,
      ),
    commit(input) {
      if (input.nextVersion !== input.expectedVersion + 1) {
        return Promise.reject(
          new RangeError(
            `nextVersion must be expectedVersion + 1, got ${input.expectedVersion} -> ${input.nextVersion}`,
          ),
        );
      }
      return translated(() => repo.commit(input), refsyncStorageError);
    },
    recordUnchangedRun: (event) =>
      translated(() => repo.recordUnchangedRun(event), refsyncStorageError),
    pendingEvents: () => translated(() => repo.pendingEvents(), refsyncStorageError),
    markEventPublished: (id, publishedAt) =>
      translated(() => repo.markEventPublished(id, publishedAt), refsyncStorageError),
    prune(options = {}) {
      const grace = options.graceVersions ?? 1; // validated only, see PruneOptions
      if (!Number.isInteger(grace) || grace < 0) {
        return Promise.reject(new RangeError(`graceVersions must be >= 0, got ${grace}`));
      }
      return translated(() => repo.prune(options), refsyncStorageError);
    },
  };
}

/** The same translation for a stream, whose errors surface while it is iterated. */
async function* translatedIterable<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (err) {
    throw refsyncStorageError(err);
  }
}

/**
 * The write side: staging (./staging), and the state document, whose single write is the commit
 * point and carries the commit's event into the outbox (./outbox).
 */
function createUntranslatedWriteRepository(conn: Connection): RefsyncWriteRepository {
  const { State } = refsyncModels(conn);
  const outbox = stateOutbox(conn);
  const staging = createStaging(conn, async () => (await readState()).version);

  async function readState(): Promise<RefsyncState> {
    const state = await State.findById(STATE_ID, { version: 1, committedAt: 1 }).lean();
    return { version: state?.version ?? 0, committedAt: state?.committedAt ?? null };
  }

  async function ensureState(): Promise<void> {
    await State.updateOne(
      { _id: STATE_ID },
      { $setOnInsert: { version: 0, committedAt: null, outbox: [] } },
      { upsert: true },
    );
  }

  return {
    readState,
    ...staging,

    async commit({ expectedVersion, nextVersion, committedAt, event }) {
      let matched: number;
      try {
        // The commit point. Filtering on the expected version makes it compare-and-set: a second
        // writer's commit, or a stale one, matches nothing and changes nothing. The event rides
        // in the same write, so a committed version always has its event.
        const result = await State.updateOne(
          { _id: STATE_ID, version: expectedVersion },
          { $set: { version: nextVersion, committedAt }, ...outbox.push(event) },
          // Version 0 may have no state document yet; the upsert creates it. If one exists at
          // another version, the insert collides on _id, which is the same conflict.
          { upsert: expectedVersion === 0 },
        );
        matched = result.matchedCount + result.upsertedCount;
      } catch (err) {
        if (duplicateKeyInfo(err) === undefined) throw err;
        matched = 0;
      }
      if (matched === 0) throw versionConflict(expectedVersion, (await readState()).version);
    },

    async recordUnchangedRun(event) {
      await ensureState();
      await State.updateOne({ _id: STATE_ID, 'outbox.id': { $ne: event.id } }, outbox.push(event));
    },

    pendingEvents: () => outbox.pending(),
    markEventPublished: (id, publishedAt = new Date()) => outbox.markPublished(id, publishedAt),

    async prune(options = {}) {
      await outbox.trim(options.keepPublishedEvents ?? 100);
      // One document per item, its previous state overwritten by the next change: no item
      // document is ever obsolete, so none is deleted.
      return 0;
    },
  };
}
