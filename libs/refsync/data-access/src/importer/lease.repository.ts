/**
 * The single-leader lease of the importer: one document per lease name, taken with one atomic
 * findOneAndUpdate when it is free (expired) or already ours. Two instances that race both send the
 * upsert; MongoDB's unique _id lets exactly one of them insert or match, the other gets a duplicate
 * key error and learns who holds the lease. A holder that dies stops renewing and the lease expires.
 *
 * Expiry is judged by the caller's clock, so the TTL must be far above any clock skew between
 * importer hosts (the default is a minute, renewed every third of it).
 */
import { isAppError } from '@nhp/shared-errors';
import { DUPLICATE_KEY_CONFLICT, modelOf, translated } from '@nhp/shared-persistence';
import { Schema, type Connection } from 'mongoose';
import { refsyncStorageError } from '../lib/errors';

export interface Lease {
  name: string;
  holder: string;
  acquiredAt: Date;
  renewedAt: Date;
  expiresAt: Date;
}

export type AcquireResult =
  { acquired: true; lease: Lease } | { acquired: false; heldBy: Lease | null };

interface LeaseDocument {
  _id: string;
  holder: string;
  acquiredAt: Date;
  renewedAt: Date;
  expiresAt: Date;
}

const leaseSchema = new Schema<LeaseDocument>(
  {
    _id: { type: String, required: true },
    holder: { type: String, required: true },
    acquiredAt: { type: Date, required: true },
    renewedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { collection: 'refsync_importer_leases', versionKey: false, strict: 'throw' },
);

function toLease(doc: LeaseDocument): Lease {
  return {
    name: doc._id,
    holder: doc.holder,
    acquiredAt: doc.acquiredAt,
    renewedAt: doc.renewedAt,
    expiresAt: doc.expiresAt,
  };
}

/** The lease model (registered once per connection). */
export function leaseModel(conn: Connection) {
  return modelOf<LeaseDocument>(conn, 'RefsyncImporterLease', leaseSchema);
}

export function createLeaseRepository(conn: Connection, name = 'refsync-importer') {
  const Leases = leaseModel(conn);

  // Every driver call is translated where it is made (see ../lib/errors): nothing leaves this
  // module but AppErrors; the duplicate key that a lost race produces is expected and answered.
  return {
    /** Takes the lease when it is free or expired, or extends it when `holder` already has it. */
    async acquire(holder: string, ttlMs: number, now = new Date()): Promise<AcquireResult> {
      const expiresAt = new Date(now.getTime() + ttlMs);
      try {
        const doc = await translated(
          () =>
            Leases.findOneAndUpdate(
              { _id: name, $or: [{ expiresAt: { $lte: now } }, { holder }] },
              { $set: { holder, acquiredAt: now, renewedAt: now, expiresAt } },
              { upsert: true, returnDocument: 'after' },
            )
              .lean<LeaseDocument>()
              .exec(),
          refsyncStorageError,
        );
        if (doc && doc.holder === holder) return { acquired: true, lease: toLease(doc) };
        return { acquired: false, heldBy: doc ? toLease(doc) : null };
      } catch (err) {
        if (!(isAppError(err) && err.code === DUPLICATE_KEY_CONFLICT)) throw err;
        const current = await translated(
          () => Leases.findById(name).lean<LeaseDocument>().exec(),
          refsyncStorageError,
        );
        return { acquired: false, heldBy: current ? toLease(current) : null };
      }
    },

    /** Extends the lease; false when `holder` no longer has it (expired and taken, or released). */
    async renew(holder: string, ttlMs: number, now = new Date()): Promise<boolean> {
      const result = await translated(
        () =>
          Leases.updateOne(
            { _id: name, holder, expiresAt: { $gt: now } },
            { $set: { renewedAt: now, expiresAt: new Date(now.getTime() + ttlMs) } },
          ).exec(),
        refsyncStorageError,
      );
      return result.matchedCount === 1;
    },

    /** Lets another instance take over at once instead of waiting for the expiry. */
    async release(holder: string, now = new Date()): Promise<void> {
      await translated(
        () =>
          Leases.updateOne(
            { _id: name, holder },
            { $set: { expiresAt: now, renewedAt: now } },
          ).exec(),
        refsyncStorageError,
      );
    },

    async current(): Promise<Lease | null> {
      const doc = await translated(
        () => Leases.findById(name).lean<LeaseDocument>().exec(),
        refsyncStorageError,
      );
      return doc ? toLease(doc) : null;
    },
  };
}

export type LeaseRepository = ReturnType<typeof createLeaseRepository>;
