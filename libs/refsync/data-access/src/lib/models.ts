import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import { Schema, type Connection, type Model } from 'mongoose';

export const ITEMS_COLLECTION = 'refsync_items';
export const STATE_COLLECTION = 'refsync_state';
/** The single state document's id. */
export const STATE_ID = 'refsync';

/** One version of one item. Never updated after insert except for `supersededAt`. */
export interface ItemVersionDoc {
  dataset: Dataset;
  itemId: string;
  /** The data version that wrote this document. */
  version: number;
  data: unknown;
  /** contentHash(data): the diff compares hashes, never data. */
  hash: string;
  isDeleted: boolean;
  lastChanged: Date;
  /** The version that replaced this document; null while it is the item's latest. */
  supersededAt: number | null;
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

const itemVersionSchema = new Schema<ItemVersionDoc>(
  {
    dataset: { type: String, enum: DATASETS, required: true },
    itemId: { type: String, required: true },
    version: { type: Number, required: true },
    // Mixed: treatment groups carry upstream fields nobody has listed; stored and returned verbatim.
    data: { type: Schema.Types.Mixed, required: true },
    hash: { type: String, required: true },
    isDeleted: { type: Boolean, required: true },
    lastChanged: { type: Date, required: true },
    supersededAt: { type: Number, default: null },
  },
  {
    collection: ITEMS_COLLECTION,
    versionKey: false,
    // minimize would drop empty objects inside data, changing what is served and its hash.
    minimize: false,
  },
);
// Diff (sinceVersion=N at V): a range scan over (N, V] already in response order, so its cost
// follows the number of changes. Unique: one document per item and version; a crashed run's
// leftovers make a re-stage fail loudly instead of duplicating an item.
itemVersionSchema.index(
  { dataset: 1, version: 1, itemId: 1 },
  { unique: true, name: 'dataset_version_item' },
);
// Full list (no sinceVersion): the latest, non-deleted documents in response order.
itemVersionSchema.index(
  { dataset: 1, supersededAt: 1, isDeleted: 1, version: 1, itemId: 1 },
  { name: 'dataset_superseded_deleted_version_item' },
);
// Per-item lookups of the write side (superseding, tombstone data): cost follows the change set.
itemVersionSchema.index(
  { dataset: 1, itemId: 1, supersededAt: 1 },
  { name: 'dataset_item_superseded' },
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
    Item:
      (conn.models['RefsyncItem'] as Model<ItemVersionDoc> | undefined) ??
      conn.model<ItemVersionDoc>('RefsyncItem', itemVersionSchema),
    State:
      (conn.models['RefsyncState'] as Model<StateDoc> | undefined) ??
      conn.model<StateDoc>('RefsyncState', stateSchema),
  };
}

/**
 * Builds the declared indexes now and waits for them (instead of mongoose's lazy autoIndex), e.g.
 * at start-up or in tests that rely on the unique index.
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
