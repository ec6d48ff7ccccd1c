import type { Dataset, ItemDataOf } from '@nhp/refsync-contracts';
import type { Connection } from 'mongoose';
import { RefsyncVersionConflictError } from './errors';
import { refsyncModels, STATE_ID, type ItemState } from './models';
import {
  changedSinceAt,
  compareResponseOrder,
  fullListAt,
  RESPONSE_ORDER,
  visibleState,
} from './visibility';

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
   *
   * Exact for the current version and for the one before the latest commit (a reader that fixed V
   * just before V+1 committed), even while the next run stages. A reader so far behind that two
   * runs staged since its version would find that state overwritten: it gets a
   * RefsyncVersionConflictError instead of a wrong answer (re-read the version and ask again).
   */
  listItems<D extends Dataset>(dataset: D, options: ListItemsOptions): Promise<StoredItem<D>[]>;
}

const ITEM_PROJECTION = {
  _id: 0,
  itemId: 1,
  data: 1,
  version: 1,
  lastChanged: 1,
  isDeleted: 1,
  prev: 1,
} as const;

interface Candidate extends ItemState {
  itemId: string;
  prev?: ItemState | null;
}
type Visible = ItemState & { itemId: string };

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

      const full = sinceVersion === undefined;
      const filter = full
        ? fullListAt(dataset, atVersion)
        : changedSinceAt(dataset, sinceVersion, atVersion);
      // Sorted by the top-level state: committed states (version <= V) come out in response order;
      // the few heads staged above V come last and are re-sorted by the state they show at V.
      const docs = (await Item.find(filter, ITEM_PROJECTION)
        .sort(RESPONSE_ORDER)
        .lean()) as unknown as Candidate[];

      const committed: Visible[] = [];
      const fromStaging: Visible[] = [];
      for (const doc of docs) {
        const visible = visibleState(doc, atVersion);
        if (visible === 'lost') {
          const actual = (await readState()).version;
          throw new RefsyncVersionConflictError(
            atVersion,
            actual,
            `refsync cannot answer at version ${atVersion} any more (now ${actual}): two runs ` +
              `staged since, item ${doc.itemId} of ${dataset} has no state at ${atVersion} left; ` +
              're-read the current version and ask again',
          );
        }
        if (!visible || (full && visible.isDeleted)) continue;
        if (sinceVersion !== undefined && visible.version <= sinceVersion) continue;
        if (visible === doc) committed.push(doc);
        else fromStaging.push({ ...visible, itemId: doc.itemId });
      }
      fromStaging.sort(compareResponseOrder);
      return mergeSorted(committed, fromStaging).map((item) => ({
        data: item.data as ItemDataOf<D>,
        version: item.version,
        lastChanged: item.lastChanged,
        isDeleted: item.isDeleted,
      }));
    },
  };
}

/** Merges two lists already in response order (the second is usually empty or tiny). */
function mergeSorted(a: Visible[], b: Visible[]): Visible[] {
  if (b.length === 0) return a;
  const out: Visible[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    out.push(compareResponseOrder(a[i], b[j]) <= 0 ? a[i++] : b[j++]);
  }
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}
