import { DATASETS, type Dataset, type ItemDataOf } from '@nhp/refsync-contracts';
import { contentHash } from '@nhp/refsync-domain';
import { duplicateKeyInfo } from '@nhp/shared-persistence';
import type { Connection } from 'mongoose';
import { RefsyncStagingError, RefsyncVersionConflictError } from './errors';
import {
  itemVersionId,
  refsyncModels,
  STATE_ID,
  type ItemVersionDoc,
  type OutboxEventDoc,
} from './models';
import type { RefsyncState } from './read-repository';
import { visibleAt } from './visibility';

/** An event recorded in the state document, to be published by the outbox publisher. */
export interface OutboxEvent {
  /** The CloudEvent id, also the Nats-Msg-Id. */
  id: string;
  subject: string;
  /** The full CloudEvent. */
  payload: object;
  createdAt: Date;
  publishedAt?: Date | null;
}

/** An item as committed at the current version (what the diff compares against). */
export interface CommittedItem<D extends Dataset = Dataset> {
  itemId: string;
  hash: string;
  isDeleted: boolean;
  version: number;
  data: ItemDataOf<D>;
}
export type CommittedItemRef = Omit<CommittedItem, 'data'>;

/** One change to stage. Shape-compatible with the domain's `ItemChange`. */
export interface StagedItemChange<T = unknown> {
  itemId: string;
  /**
   * Required unless isDeleted: a tombstone without data keeps the last committed data. Stored as
   * given: validate with the dataset's contract schema before staging.
   */
  data?: T;
  /** contentHash(data); computed when absent. */
  hash?: string;
  isDeleted: boolean;
}

export interface StageResult {
  inserted: number;
  superseded: number;
}

export interface CommitInput {
  expectedVersion: number;
  nextVersion: number;
  committedAt: Date;
  event: OutboxEvent;
}

export interface RecoverResult {
  /** Staged documents of an uncommitted version that were deleted. */
  removed: number;
  /** Committed documents whose supersededAt pointed at an uncommitted version, made latest again. */
  restored: number;
}

export interface PruneOptions {
  /** Versions of grace for in-flight readers (default 1: readers at V-1 still see their data). */
  graceVersions?: number;
  /** Published outbox events kept for inspection (default 100); pending events are never pruned. */
  keepPublishedEvents?: number;
}

export interface RefsyncWriteRepository {
  /** Undoes whatever an uncommitted run left behind. Call first, while holding the importer lease. */
  recover(): Promise<RecoverResult>;
  readState(): Promise<RefsyncState>;
  /** The committed items of one dataset (tombstones included), streamed from a cursor. */
  committedItems<D extends Dataset>(dataset: D): AsyncIterable<CommittedItem<D>>;
  committedItems<D extends Dataset>(
    dataset: D,
    options: { includeData: false },
  ): AsyncIterable<CommittedItemRef>;
  /** `committedItems(dataset, { includeData: false })`: what a hash diff needs, nothing more. */
  committedRefs(dataset: Dataset): AsyncIterable<CommittedItemRef>;
  /** Writes changes as version `nextVersion`, invisible to readers until `commit`. */
  stageChanges(
    nextVersion: number,
    dataset: Dataset,
    changes: Iterable<StagedItemChange>,
    committedAt: Date,
  ): Promise<StageResult>;
  /** Makes `nextVersion` visible and records its event, in one document write. */
  commit(input: CommitInput): Promise<void>;
  /** Records the event of a run that changed nothing; the version stays. Idempotent per event id. */
  recordUnchangedRun(event: OutboxEvent): Promise<void>;
  /** Events not yet acknowledged by JetStream, oldest first. */
  pendingEvents(): Promise<OutboxEvent[]>;
  /** Returns false when the event is unknown or was already marked. */
  markEventPublished(id: string, publishedAt?: Date): Promise<boolean>;
  /** Deletes superseded documents no reader can need any more; returns how many. */
  prune(options?: PruneOptions): Promise<number>;
}

/** Documents per insertMany/updateMany: bounds memory and request size for 100k-item change sets. */
export const STAGE_BATCH_SIZE = 1000;

export function createRefsyncWriteRepository(conn: Connection): RefsyncWriteRepository {
  const { Item, State } = refsyncModels(conn);

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

  async function* committedItems(
    dataset: Dataset,
    options: { includeData?: boolean } = {},
  ): AsyncGenerator<CommittedItem | CommittedItemRef> {
    const includeData = options.includeData ?? true;
    const { version } = await readState();
    if (version === 0) return;
    const projection = {
      _id: 0,
      itemId: 1,
      hash: 1,
      isDeleted: 1,
      version: 1,
      ...(includeData ? { data: 1 } : {}),
    };
    const cursor = Item.find(visibleAt(dataset, version), projection)
      .lean()
      .cursor({ batchSize: STAGE_BATCH_SIZE });
    for await (const doc of cursor) {
      const ref = {
        itemId: doc.itemId,
        hash: doc.hash,
        isDeleted: doc.isDeleted,
        version: doc.version,
      };
      yield includeData ? { ...ref, data: doc.data as CommittedItem['data'] } : ref;
    }
  }

  async function stageBatch(
    nextVersion: number,
    dataset: Dataset,
    batch: StagedItemChange[],
    committedAt: Date,
  ): Promise<StageResult> {
    const committed = nextVersion - 1;
    const ids = batch.map((c) => c.itemId);
    const duplicateInBatch = ids.find((id, i) => ids.indexOf(id) !== i);
    if (duplicateInBatch !== undefined) {
      throw new RefsyncStagingError(`item ${duplicateInBatch} appears twice in one change set`, [
        duplicateInBatch,
      ]);
    }

    // A tombstone keeps the item's last committed data (so clients learn which id went away).
    const needPrevious = batch
      .filter((c) => c.isDeleted && c.data === undefined)
      .map((c) => c.itemId);
    const previous = new Map<string, { data: unknown; hash: string }>();
    if (needPrevious.length > 0) {
      const docs = await Item.find(
        { ...visibleAt(dataset, committed), itemId: { $in: needPrevious }, isDeleted: false },
        { _id: 0, itemId: 1, data: 1, hash: 1 },
      ).lean();
      for (const doc of docs) previous.set(doc.itemId, { data: doc.data, hash: doc.hash });
      const unknown = needPrevious.filter((id) => !previous.has(id));
      if (unknown.length > 0) {
        throw new RefsyncStagingError(
          `cannot delete items that are not active at version ${committed}: ${unknown.slice(0, 20).join(', ')}`,
          unknown,
        );
      }
    }

    const docs: ItemVersionDoc[] = batch.map((change) => {
      const prior = previous.get(change.itemId);
      if (!prior && change.data === undefined) {
        throw new RefsyncStagingError(`item ${change.itemId} has no data`, [change.itemId]);
      }
      const data = prior ? prior.data : change.data;
      return {
        _id: itemVersionId(dataset, change.itemId, nextVersion),
        dataset,
        itemId: change.itemId,
        version: nextVersion,
        data,
        hash: change.hash ?? prior?.hash ?? contentHash(data),
        isDeleted: change.isDeleted,
        lastChanged: committedAt,
        supersededAt: null,
      };
    });

    try {
      // lean: the documents are built complete above; skipping hydration keeps 100k-item runs cheap.
      await Item.insertMany(docs, { ordered: false, lean: true });
    } catch (err) {
      if (isDuplicateKey(err)) {
        throw new RefsyncStagingError(
          `version ${nextVersion} already holds some of these items in ${dataset}: a previous run was not cleaned up (call recover() first) or the change set repeats an item`,
        );
      }
      throw err;
    }

    // Still visible at V: supersededAt = V+1 > V. Becomes invisible only when V+1 is committed.
    const result = await Item.updateMany(
      { dataset, itemId: { $in: ids }, version: { $lte: committed }, supersededAt: null },
      { $set: { supersededAt: nextVersion } },
    );
    return { inserted: docs.length, superseded: result.modifiedCount };
  }

  return {
    readState,
    committedItems: committedItems as RefsyncWriteRepository['committedItems'],
    committedRefs: (dataset) =>
      committedItems(dataset, { includeData: false }) as AsyncIterable<CommittedItemRef>,

    async recover() {
      const { version } = await readState();
      let removed = 0;
      let restored = 0;
      for (const dataset of DATASETS) {
        removed += (await Item.deleteMany({ dataset, version: { $gt: version } })).deletedCount;
        restored += (
          await Item.updateMany(
            { dataset, supersededAt: { $gt: version } },
            { $set: { supersededAt: null } },
          )
        ).modifiedCount;
      }
      return { removed, restored };
    },

    async stageChanges(nextVersion, dataset, changes, committedAt) {
      const { version } = await readState();
      if (nextVersion !== version + 1)
        throw new RefsyncVersionConflictError(nextVersion - 1, version);
      const total: StageResult = { inserted: 0, superseded: 0 };
      let batch: StagedItemChange[] = [];
      const flush = async () => {
        const r = await stageBatch(nextVersion, dataset, batch, committedAt);
        total.inserted += r.inserted;
        total.superseded += r.superseded;
        batch = [];
      };
      for (const change of changes) {
        batch.push(change);
        if (batch.length >= STAGE_BATCH_SIZE) await flush();
      }
      if (batch.length > 0) await flush();
      return total;
    },

    async commit({ expectedVersion, nextVersion, committedAt, event }) {
      if (nextVersion !== expectedVersion + 1) {
        throw new RangeError(
          `nextVersion must be expectedVersion + 1, got ${expectedVersion} -> ${nextVersion}`,
        );
      }
      let matched: number;
      try {
        // The commit point. Filtering on the expected version makes it compare-and-set: a second
        // writer's commit, or a stale one, matches nothing and changes nothing.
        const result = await State.updateOne(
          { _id: STATE_ID, version: expectedVersion },
          { $set: { version: nextVersion, committedAt }, $push: { outbox: toOutboxDoc(event) } },
          // Version 0 may have no state document yet; the upsert creates it. If one exists at
          // another version, the insert collides on _id, which is the same conflict.
          { upsert: expectedVersion === 0 },
        );
        matched = result.matchedCount + result.upsertedCount;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        matched = 0;
      }
      if (matched === 0)
        throw new RefsyncVersionConflictError(expectedVersion, (await readState()).version);
    },

    async recordUnchangedRun(event) {
      await ensureState();
      await State.updateOne(
        { _id: STATE_ID, 'outbox.id': { $ne: event.id } },
        { $push: { outbox: toOutboxDoc(event) } },
      );
    },

    async pendingEvents() {
      const state = await State.findById(STATE_ID, { outbox: 1 }).lean();
      return (state?.outbox ?? [])
        .filter((e) => !e.publishedAt)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
        .map(fromOutboxDoc);
    },

    async markEventPublished(id, publishedAt = new Date()) {
      const result = await State.updateOne(
        { _id: STATE_ID, outbox: { $elemMatch: { id, publishedAt: null } } },
        { $set: { 'outbox.$.publishedAt': publishedAt } },
      );
      return result.modifiedCount > 0;
    },

    async prune(options = {}) {
      const grace = options.graceVersions ?? 1;
      const keepPublished = options.keepPublishedEvents ?? 100;
      if (!Number.isInteger(grace) || grace < 0)
        throw new RangeError(`graceVersions must be >= 0, got ${grace}`);
      const state = await State.findById(STATE_ID, { version: 1, outbox: 1 }).lean();
      if (!state) return 0;

      // A document superseded at S is visible to readers at versions below S only. Readers are at
      // V (or, in flight, V - grace at the oldest), so S <= V - grace is invisible to all of them.
      // Tombstones are never superseded by their deletion, so they are kept for ever (rule 3).
      let deleted = 0;
      const limit = state.version - grace;
      if (limit >= 1) {
        for (const dataset of DATASETS) {
          deleted += (await Item.deleteMany({ dataset, supersededAt: { $lte: limit } }))
            .deletedCount;
        }
      }

      const published = state.outbox
        .filter((e) => e.publishedAt)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
      const drop = published
        .slice(0, Math.max(0, published.length - keepPublished))
        .map((e) => e.id);
      if (drop.length > 0) {
        await State.updateOne(
          { _id: STATE_ID },
          { $pull: { outbox: { id: { $in: drop }, publishedAt: { $ne: null } } } },
        );
      }
      return deleted;
    },
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

function isDuplicateKey(err: unknown): boolean {
  return duplicateKeyInfo(err) !== undefined;
}
