import type { Dataset, ItemDataOf } from '@nhp/refsync-contracts';
import type { Connection } from 'mongoose';
import { refsyncModels, STATE_ID } from './models';
import { changedSinceAt, RESPONSE_ORDER, visibleAt } from './visibility';

/** One item as a response lists it. Keys in envelope order, nothing else: safe to serialise as is. */
export interface StoredItem<D extends Dataset = Dataset> {
  data: ItemDataOf<D>;
  version: number;
  lastChanged: Date;
  isDeleted: boolean;
}

export interface ListItemsOptions {
  /** The committed version to read at: the `currentVersion` the response will carry. */
  atVersion: number;
  /** Effective sinceVersion (>= 0, see effectiveSince); absent for the full list. */
  sinceVersion?: number;
}

export interface RefsyncState {
  version: number;
  committedAt: Date | null;
}

export interface RefsyncReadRepository {
  /** The committed data version; 0 before the first commit. */
  currentVersion(): Promise<number>;
  readState(): Promise<RefsyncState>;
  /**
   * Items of one dataset exactly as rules 1-3 select them at `atVersion`, ordered by version, then
   * id. Without sinceVersion: non-deleted items only. With it: items whose version is above it,
   * tombstones included. Read `currentVersion()` first and pass it here.
   */
  listItems<D extends Dataset>(dataset: D, options: ListItemsOptions): Promise<StoredItem<D>[]>;
}

const ITEM_PROJECTION = { _id: 0, data: 1, version: 1, lastChanged: 1, isDeleted: 1 } as const;

export function createRefsyncReadRepository(conn: Connection): RefsyncReadRepository {
  const { Item, State } = refsyncModels(conn);

  async function readState(): Promise<RefsyncState> {
    const state = await State.findById(STATE_ID, { version: 1, committedAt: 1 }).lean();
    return { version: state?.version ?? 0, committedAt: state?.committedAt ?? null };
  }

  return {
    readState,

    async currentVersion() {
      return (await readState()).version;
    },

    async listItems<D extends Dataset>(
      dataset: D,
      options: ListItemsOptions,
    ): Promise<StoredItem<D>[]> {
      const { atVersion, sinceVersion } = options;
      if (!Number.isSafeInteger(atVersion) || atVersion < 0) {
        throw new RangeError(`atVersion must be a non-negative safe integer, got ${atVersion}`);
      }
      if (
        sinceVersion !== undefined &&
        !(Number.isSafeInteger(sinceVersion) && sinceVersion >= 0)
      ) {
        throw new RangeError(
          `sinceVersion must be an effective (non-negative) version, got ${sinceVersion}`,
        );
      }
      // Rule 4, and nothing exists at version 0: no round trip needed.
      if (atVersion === 0 || (sinceVersion !== undefined && sinceVersion >= atVersion)) return [];

      const filter =
        sinceVersion === undefined
          ? { ...visibleAt(dataset, atVersion), isDeleted: false }
          : changedSinceAt(dataset, sinceVersion, atVersion);
      const docs = await Item.find(filter, ITEM_PROJECTION).sort(RESPONSE_ORDER).lean();
      return docs.map((doc) => ({
        data: doc.data as ItemDataOf<D>,
        version: doc.version,
        lastChanged: doc.lastChanged,
        isDeleted: doc.isDeleted,
      }));
    },
  };
}
