import type { Dataset, ItemDataOf } from '@nhp/refsync-contracts';
import mongoose, { type Connection } from 'mongoose';
import { compareResponseOrder } from '@nhp/refsync-domain';
import { translated } from '@nhp/shared-persistence';
import { databaseUnavailable, refsyncStorageError, versionConflict } from './errors';
import { refsyncModels, STATE_ID, type ItemState } from './models';
import { changedSinceAt, fullListAt, RESPONSE_ORDER, visibleState } from './visibility';

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

/** An item as scanItems delivers it: the envelope fields and the id it is ordered by. */
export interface ScannedItem<D extends Dataset = Dataset> {
  itemId: string;
  item: StoredItem<D>;
}

export interface RefsyncReadRepository {
  /** The committed data version; 0 before the first commit. */
  currentVersion(): Promise<number>;
  readState(): Promise<RefsyncState>;
  /**
   * Items of one dataset exactly as R1-R3 (libs/refsync/domain/README.md) select them at `atVersion`, ordered by version, then
   * id. Without sinceVersion: non-deleted items only. With it: items whose version is above it,
   * tombstones included. Read `currentVersion()` first and pass it here.
   *
   * Exact for the current version and for the one before the latest commit (a reader that fixed V
   * just before V+1 committed), even while the next run stages. A reader so far behind that two
   * runs staged since its version would find that state overwritten: it gets an AppError
   * REFSYNC_VERSION_CONFLICT instead of a wrong answer (re-read the version and ask again).
   *
   * Every method rejects with an AppError: driver errors are translated (503 DATABASE_UNAVAILABLE
   * when the database cannot be reached, 500 otherwise), and while the driver already knows the
   * connection is down they fail at once instead of waiting for server selection (see README,
   * "Errors").
   */
  listItems<D extends Dataset>(dataset: D, options: ListItemsOptions): Promise<StoredItem<D>[]>;
  /**
   * listItems' selection, streamed: the documents are read through a cursor in batches and never
   * held all at once, so a caller can serialise a 100k-item list without building 100k objects.
   *
   * Items whose state at `atVersion` is their head come to `onItem` in response order, as they are
   * read. The few that a staging run under way has replaced since (their state at V is `prev`) can
   * only be known once the cursor ends: they are the resolved value, in response order, to be
   * merged in by compareResponseOrder on `{version, itemId}`. No item comes both ways. The same
   * errors as listItems; after a rejection, whatever `onItem` received must be discarded.
   */
  scanItems<D extends Dataset>(
    dataset: D,
    options: ListItemsOptions,
    onItem: (scanned: ScannedItem<D>) => void,
  ): Promise<ScannedItem<D>[]>;
}

/** Documents per cursor batch: about 1 MB of reimbursement groups. */
const SCAN_BATCH_SIZE = 1000;

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

/**
 * True when the driver has already seen the server go away (mongoose turns `disconnected` after a
 * failed heartbeat or operation). An operation then would only wait for server selection to time
 * out, so the caller is told at once. While connecting (start, or the driver reconnecting) the
 * operation is tried.
 */
export function knownDown(conn: Connection): boolean {
  const state = conn.readyState;
  return (
    state !== mongoose.ConnectionStates.connected && state !== mongoose.ConnectionStates.connecting
  );
}

export function createRefsyncReadRepository(conn: Connection): RefsyncReadRepository {
  const { Item, State } = refsyncModels(conn);

  /** Every read goes through here: fail fast while known down, translate driver errors. */
  function read<T>(operation: () => Promise<T>): Promise<T> {
    if (knownDown(conn)) return Promise.reject(databaseUnavailable());
    return translated(operation, refsyncStorageError);
  }

  function readState(): Promise<RefsyncState> {
    return read(async () => {
      const state = await State.findById(STATE_ID, { version: 1, committedAt: 1 }).lean();
      return { version: state?.version ?? 0, committedAt: state?.committedAt ?? null };
    });
  }

  function scanItems<D extends Dataset>(
    dataset: D,
    options: ListItemsOptions,
    onItem: (scanned: ScannedItem<D>) => void,
  ): Promise<ScannedItem<D>[]> {
    const { atVersion, sinceVersion } = options;
    // A programmer error, not a storage one: it stays a RangeError.
    if (!Number.isSafeInteger(atVersion) || atVersion < 0) {
      return Promise.reject(
        new RangeError(`atVersion must be a non-negative safe integer, got ${atVersion}`),
      );
    }
    if (sinceVersion !== undefined && !(Number.isSafeInteger(sinceVersion) && sinceVersion >= 0)) {
      return Promise.reject(
        new RangeError(
          `sinceVersion must be an effective (non-negative) version, got ${sinceVersion}`,
        ),
      );
    }
    // R4, and nothing exists at version 0: no round trip needed.
    if (atVersion === 0 || (sinceVersion !== undefined && sinceVersion >= atVersion)) {
      return Promise.resolve([]);
    }
    // The caller's own error (onItem threw) is not a storage error: it comes back as it was.
    let sinkError: { error: unknown } | undefined;
    const deliver = (scanned: ScannedItem<D>) => {
      try {
        onItem(scanned);
      } catch (error) {
        sinkError = { error };
        throw error;
      }
    };
    return read(() => scanCursor(dataset, options, deliver)).catch((err: unknown) => {
      throw sinkError ? sinkError.error : err;
    });
  }

  async function scanCursor<D extends Dataset>(
    dataset: D,
    options: ListItemsOptions,
    onItem: (scanned: ScannedItem<D>) => void,
  ): Promise<ScannedItem<D>[]> {
    const { atVersion, sinceVersion } = options;
    const full = sinceVersion === undefined;
    const filter =
      sinceVersion === undefined
        ? fullListAt(dataset, atVersion)
        : changedSinceAt(dataset, sinceVersion, atVersion);
    // Sorted by the top-level state: committed states (version <= V) come out in response order;
    // the few heads staged above V come last and are re-sorted by the state they show at V.
    const cursor = Item.find(filter, ITEM_PROJECTION)
      .sort(RESPONSE_ORDER)
      .lean()
      .cursor({ batchSize: SCAN_BATCH_SIZE });
    const late: ScannedItem<D>[] = [];
    try {
      for await (const doc of cursor as AsyncIterable<Candidate>) {
        const visible = visibleState(doc, atVersion);
        if (visible === 'lost') {
          const actual = (await readState()).version;
          throw versionConflict(
            atVersion,
            actual,
            `refsync cannot answer at version ${atVersion} any more (now ${actual}): two runs ` +
              `staged since, item ${doc.itemId} of ${dataset} has no state at ${atVersion} ` +
              'left; re-read the current version and ask again',
          );
        }
        if (!visible || (full && visible.isDeleted)) continue;
        if (sinceVersion !== undefined && visible.version <= sinceVersion) continue;
        const scanned: ScannedItem<D> = {
          itemId: doc.itemId,
          item: {
            data: visible.data as ItemDataOf<D>,
            version: visible.version,
            lastChanged: visible.lastChanged,
            isDeleted: visible.isDeleted,
          },
        };
        if (visible === doc) onItem(scanned);
        else late.push(scanned);
      }
    } finally {
      // Releases the server-side cursor when the scan stops early. A failure to close must not hide
      // the error that stopped it (or fail a scan that has read everything).
      await cursor.close().catch(() => undefined);
    }
    return late.sort(compareScanned);
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
      const inOrder: ScannedItem<D>[] = [];
      const late = await scanItems(dataset, options, (scanned) => inOrder.push(scanned));
      return mergeSorted(inOrder, late).map((scanned) => scanned.item);
    },

    scanItems,
  };
}

function compareScanned(a: ScannedItem, b: ScannedItem): number {
  return compareResponseOrder(
    { version: a.item.version, itemId: a.itemId },
    { version: b.item.version, itemId: b.itemId },
  );
}

/** Merges two lists already in response order (the second is usually empty or tiny). */
function mergeSorted<T extends ScannedItem>(a: T[], b: T[]): T[] {
  if (b.length === 0) return a;
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    out.push(compareScanned(a[i], b[j]) <= 0 ? a[i++] : b[j++]);
  }
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}
