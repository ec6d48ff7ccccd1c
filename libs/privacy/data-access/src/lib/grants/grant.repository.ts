import type { Grant, GrantAccess, GrantStore } from '@nhp/privacy-domain';
import { modelOf, translated } from '@nhp/shared-persistence';
import { LRUCache } from 'lru-cache';
import type { Collection } from 'mongodb';
import { Schema, type Connection } from 'mongoose';
import { cacheTiming, DEFAULT_CACHE_TTL_MS, type AuditContext } from '../audit-context';
import { journalPush, newJournalEntry, type Journal, type JournalEntry } from '../journal';

export const GRANTS_COLLECTION = 'privacy_grants';

export type { Grant };

interface GrantDocument {
  /** `<clientId>/<partKode>`, both URI-encoded: one document per pair, found without an index. */
  _id: string;
  clientId: string;
  partKode: string;
  read: boolean;
  write: boolean;
  createdAt: Date;
  updatedAt: Date;
  journal?: JournalEntry[];
}

const grantSchema = new Schema<GrantDocument>(
  {
    _id: { type: String, required: true },
    clientId: { type: String, required: true },
    partKode: { type: String, required: true },
    read: { type: Boolean, required: true },
    write: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    journal: { type: [Schema.Types.Mixed], default: undefined, select: false },
  },
  { collection: GRANTS_COLLECTION, versionKey: false, strict: 'throw' },
);
grantSchema.index({ clientId: 1, partKode: 1 }, { name: 'client_part' });

export const grantId = (clientId: string, partKode: string) =>
  `${encodeURIComponent(clientId)}/${encodeURIComponent(partKode)}`;

function toGrant(doc: GrantDocument): Grant {
  return {
    clientId: doc.clientId,
    partKode: doc.partKode,
    read: doc.read,
    write: doc.write,
    updatedAt: doc.updatedAt,
  };
}

export interface CreateGrantRepositoryOptions {
  connection: Connection;
  journal: Journal;
  now?: () => Date;
  /**
   * How long an answer of `allows` stays in this process's memory (default 5 s; 0: off). Writes
   * through this repository drop it at once; a grant or revoke made elsewhere (the admin tool,
   * another replica) takes effect here within this time at most.
   */
  cacheTtlMs?: number;
  /**
   * Called with the key of each entry this repository changed, after the write: the app tells
   * the other instances (an internal NATS subject), which `forget` it within a second.
   */
  onChanged?: (key: string) => void;
}

/**
 * Grants (client id, partKode, read, write). A revoke clears both rights rather than deleting the
 * document, so the revoke's audit entry travels in the same write as the change (see the journal).
 */

/** The model (registered once per connection), with the indexes its schema declares. */
export function grantModel(connection: Connection) {
  return modelOf<GrantDocument>(connection, 'PrivacyGrant', grantSchema);
}
export function createGrantRepository(options: CreateGrantRepositoryOptions) {
  const { connection, journal } = options;
  const now = options.now ?? (() => new Date());
  const ttl = options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const cache =
    ttl > 0
      ? new LRUCache<string, { read: boolean; write: boolean }>({
          max: 10_000,
          ...cacheTiming(ttl),
        })
      : undefined;
  const Grants = grantModel(connection);
  // Writes go through the driver: the journal entry must land exactly as built, uncast.
  const raw = Grants.collection as unknown as Collection<GrantDocument>;

  function entryFor(clientId: string, partKode: string, operation: string, audit: AuditContext) {
    return newJournalEntry(
      {
        actor: audit.actor,
        operation,
        target: { collection: GRANTS_COLLECTION, key: `${clientId}/${partKode}`, partKode },
        requestId: audit.requestId,
      },
      now(),
    );
  }

  async function rightsOf(clientId: string, partKode: string) {
    const id = grantId(clientId, partKode);
    const cached = cache?.get(id);
    if (cached) return cached;
    const doc = await translated(() =>
      Grants.findById(id).select({ read: 1, write: 1 }).lean<GrantDocument>().exec(),
    );
    const rights = { read: doc?.read === true, write: doc?.write === true };
    cache?.set(id, rights);
    return rights;
  }

  return {
    allows(clientId: string, partKode: string, access: GrantAccess): Promise<boolean> {
      // rightsOf's promise carried on, not awaited in a function of its own: every status check asks.
      return rightsOf(clientId, partKode).then((rights) => rights[access]);
    },

    /** Sets the client's rights on the party's definitions to exactly these. */
    async set(
      clientId: string,
      partKode: string,
      rights: { read: boolean; write: boolean },
      audit: AuditContext,
    ): Promise<Grant> {
      const id = grantId(clientId, partKode);
      const entry = entryFor(clientId, partKode, 'grant.set', audit);
      await journal.register(entry, GRANTS_COLLECTION, id);
      const at = now();
      await translated(() =>
        raw.updateOne(
          { _id: id },
          {
            $set: { clientId, partKode, read: rights.read, write: rights.write, updatedAt: at },
            $setOnInsert: { createdAt: at },
            ...journalPush(entry),
          },
          { upsert: true },
        ),
      );
      cache?.delete(id);
      options.onChanged?.(id);
      journal.flushSoon(GRANTS_COLLECTION, id);
      return { clientId, partKode, ...rights, updatedAt: at };
    },

    /** Withdraws both rights; false (and nothing written) when the client had none. */
    async revoke(clientId: string, partKode: string, audit: AuditContext): Promise<boolean> {
      const id = grantId(clientId, partKode);
      const entry = entryFor(clientId, partKode, 'grant.revoke', audit);
      await journal.register(entry, GRANTS_COLLECTION, id);
      const result = await translated(() =>
        raw.updateOne(
          { _id: id, $or: [{ read: true }, { write: true }] },
          { $set: { read: false, write: false, updatedAt: now() }, ...journalPush(entry) },
        ),
      );
      cache?.delete(id);
      if (result.matchedCount === 0) return false;
      options.onChanged?.(id);
      journal.flushSoon(GRANTS_COLLECTION, id);
      return true;
    },

    /** Grants that give something, by client then party; one client's only with `clientId`. */
    async list(filter: { clientId?: string } = {}): Promise<Grant[]> {
      const query = {
        ...(filter.clientId === undefined ? {} : { clientId: filter.clientId }),
        $or: [{ read: true }, { write: true }],
      };
      const docs = await translated(() =>
        Grants.find(query)
          .select({ journal: 0 })
          .sort({ clientId: 1, partKode: 1 })
          .lean<GrantDocument[]>()
          .exec(),
      );
      return docs.map(toGrant);
    },

    /** Drops one cached answer (`grantId`), when another instance announced a change of it. */
    forget(id: string): void {
      cache?.delete(id);
    },

    clearCache(): void {
      cache?.clear();
    },
  } satisfies GrantStore & Record<string, unknown>;
}

export type GrantRepository = ReturnType<typeof createGrantRepository>;
