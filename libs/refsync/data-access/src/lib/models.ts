import { modelOf } from '@nhp/shared-persistence';
import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import { Schema, type Connection, type Model } from 'mongoose';

export const ITEMS_COLLECTION = 'refsync_items';
export const STATE_COLLECTION = 'refsync_state';
/** The single state document's id. */
export const STATE_ID = 'refsync';

/**
 * The `_id` of an item's head document: `<dataset>:<itemId>`. Deterministic, so the primary key
 * itself guarantees one document per item (a new item staged twice fails with E11000 instead of
 * duplicating) and a staging run finds an item's document by point lookup, with no extra index.
 * Unambiguous: a dataset name holds no ':'.
 */
export function itemDocId(dataset: Dataset, itemId: string): string {
  return `${dataset}:${itemId}`;
}

/** One state of one item, as one data version left it. */
export interface ItemState {
  /** The data version that wrote this state. */
  version: number;
  data: unknown;
  /** contentHash(data): the diff compares hashes, never data. */
  hash: string;
  /**
   * SHA-256 (base64) of the exact upstream bytes `data` was parsed from, when the importer knew
   * them; null or absent otherwise (tombstones, older documents, changes staged without it). A
   * nightly run that meets the same bytes again knows the item is unchanged without parsing it.
   * Invariant: set only together with the data parsed from exactly those bytes.
   */
  sourceHash?: string | null;
  isDeleted: boolean;
  lastChanged: Date;
}

/**
 * An item's head document: its latest state at top level (which is staged, i.e. invisible, while
 * `version` is above the committed version) and, in `prev`, the state it replaced. One document per
 * item, so staging a change writes exactly one document. (Named ItemVersionDoc for compatibility.)
 */
export interface ItemVersionDoc extends ItemState {
  _id: string;
  dataset: Dataset;
  itemId: string;
  /** The state the latest one replaced; null for an item that has had one state since insertion or recovery. */
  prev: ItemState | null;
}

export interface OutboxEventDoc {
  id: string;
  subject: string;
  payload: unknown;
  createdAt: Date;
  publishedAt: Date | null;
}

export interface StateDoc {
  _id: string;
  /** The committed data version: the single source of visibility. */
  version: number;
  committedAt: Date | null;
  outbox: OutboxEventDoc[];
}

/** The fields of one state: a head document's top level and its `prev` alike. */
const itemStateFields = {
  version: { type: Number, required: true },
  // Mixed: treatment groups carry upstream fields nobody has listed; stored and returned verbatim.
  data: { type: Schema.Types.Mixed, required: true },
  hash: { type: String, required: true },
  sourceHash: { type: String, default: null },
  isDeleted: { type: Boolean, required: true },
  lastChanged: { type: Date, required: true },
};

const itemStateSchema = new Schema<ItemState>(itemStateFields, { _id: false, minimize: false });

const itemVersionSchema = new Schema<ItemVersionDoc>(
  {
    _id: { type: String, required: true },
    dataset: { type: String, enum: DATASETS, required: true },
    itemId: { type: String, required: true },
    ...itemStateFields,
    prev: { type: itemStateSchema, default: null },
  },
  {
    collection: ITEMS_COLLECTION,
    versionKey: false,
    // minimize would drop empty objects inside data, changing what is served and its hash.
    minimize: false,
  },
);
// Indexes serve MongoDB and the project's own wire-compatible server alike. The latter uses an
// index when equality or $in pins a prefix of it (optionally followed by a numeric range), which
// is why the diff is queried as `version $in (N, V+2]` rather than as a range.
//
// Diff (sinceVersion=N at V): point lookups of the versions in (N, V+2], so its cost follows the
// number of items changed since N, not the dataset size. Also recover()'s `version > V` and, on
// MongoDB, the full list's second $or branch (the few items of a staging under way). itemId is
// part of it so that every use comes out in response order on MongoDB: the $in as merged point
// ranges, and the full list's second branch, so that both branches of the $or provide the sort
// and MongoDB merges them as they stream instead of sorting the whole dataset in memory first.
itemVersionSchema.index({ dataset: 1, version: 1, itemId: 1 }, { name: 'dataset_version_item' });
// Full list (no sinceVersion) on MongoDB: the non-deleted committed states in response order.
itemVersionSchema.index(
  { dataset: 1, isDeleted: 1, version: 1, itemId: 1 },
  { name: 'dataset_deleted_version_item' },
);

const outboxEventSchema = new Schema<OutboxEventDoc>(
  {
    id: { type: String, required: true },
    subject: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, required: true },
    createdAt: { type: Date, required: true },
    publishedAt: { type: Date, default: null },
  },
  { _id: false, minimize: false },
);

const stateSchema = new Schema<StateDoc>(
  {
    _id: { type: String, required: true },
    version: { type: Number, required: true, default: 0 },
    committedAt: { type: Date, default: null },
    outbox: { type: [outboxEventSchema], default: [] },
  },
  { collection: STATE_COLLECTION, versionKey: false, minimize: false },
);

export interface RefsyncModels {
  Item: Model<ItemVersionDoc>;
  State: Model<StateDoc>;
}

/** Registers (once per connection) and returns the refsync models with their declared indexes. */
export function refsyncModels(conn: Connection): RefsyncModels {
  return {
    Item: modelOf<ItemVersionDoc>(conn, 'RefsyncItem', itemVersionSchema),
    State: modelOf<StateDoc>(conn, 'RefsyncState', stateSchema),
  };
}

/**
 * Builds the declared indexes now and waits for them (instead of mongoose's lazy autoIndex), e.g.
 * at start-up, or in tests and benchmarks that measure queries.
 */
export async function ensureRefsyncIndexes(conn: Connection): Promise<void> {
  const { Item, State } = refsyncModels(conn);
  await Item.createCollection().catch(ignoreNamespaceExists);
  await State.createCollection().catch(ignoreNamespaceExists);
  await Item.createIndexes();
  await State.createIndexes();
}

function ignoreNamespaceExists(err: unknown): void {
  if ((err as { code?: number }).code !== 48) throw err;
}
