import { privacyErrors, type Part } from '@nhp/privacy-domain';
import { duplicateKeyInfo, modelOf, toAppError, translated } from '@nhp/shared-persistence';
import type { Collection } from 'mongodb';
import { Schema, type Connection } from 'mongoose';
import type { AuditContext } from '../audit-context';
import { journalPush, newJournalEntry, type Journal, type JournalEntry } from '../journal';

export const PARTS_COLLECTION = 'privacy_parts';

export type { Part } from '@nhp/privacy-domain';

interface PartDocument {
  _id: string;
  navn: string | null;
  kortNavn: string | null;
  beskrivelse: string | null;
  uri: string | null;
  createdAt: Date;
  updatedAt: Date;
  journal?: JournalEntry[];
}

const partSchema = new Schema<PartDocument>(
  {
    _id: { type: String, required: true },
    navn: { type: String, default: null },
    kortNavn: { type: String, default: null },
    beskrivelse: { type: String, default: null },
    uri: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    journal: { type: [Schema.Types.Mixed], default: undefined, select: false },
  },
  { collection: PARTS_COLLECTION, versionKey: false, strict: 'throw' },
);

function toPart(doc: PartDocument): Part {
  return {
    partKode: doc._id,
    navn: doc.navn ?? null,
    kortNavn: doc.kortNavn ?? null,
    beskrivelse: doc.beskrivelse ?? null,
    uri: doc.uri ?? null,
  };
}

export interface CreatePartRepositoryOptions {
  connection: Connection;
  journal: Journal;
  now?: () => Date;
}

/**
 * Parties, keyed by partKode (the document id, so "exists" is the database's own duplicate key).
 * Every write carries its audit entry in the same single-document write (see the journal).
 */

/** The model (registered once per connection), with the indexes its schema declares. */
export function partModel(connection: Connection) {
  return modelOf<PartDocument>(connection, 'PrivacyPart', partSchema);
}
export function createPartRepository(options: CreatePartRepositoryOptions) {
  const { connection, journal } = options;
  const now = options.now ?? (() => new Date());
  const Parts = partModel(connection);
  // Writes go through the driver: the journal entry must land exactly as built, uncast.
  const raw = Parts.collection as unknown as Collection<PartDocument>;

  function entryFor(partKode: string, operation: string, audit: AuditContext): JournalEntry {
    return newJournalEntry(
      {
        actor: audit.actor,
        operation,
        target: { collection: PARTS_COLLECTION, key: partKode, partKode },
        requestId: audit.requestId,
      },
      now(),
    );
  }

  const fields = (part: Part) => ({
    navn: part.navn,
    kortNavn: part.kortNavn,
    beskrivelse: part.beskrivelse,
    uri: part.uri,
  });

  return {
    /** Creates the party; EPVK-102409 when one with the partKode exists. */
    async create(part: Part, audit: AuditContext): Promise<void> {
      const entry = entryFor(part.partKode, 'part.create', audit);
      await journal.register(entry, PARTS_COLLECTION, part.partKode);
      const at = now();
      try {
        await raw.insertOne({
          _id: part.partKode,
          ...fields(part),
          createdAt: at,
          updatedAt: at,
          journal: [entry],
        });
      } catch (err) {
        if (duplicateKeyInfo(err)) throw privacyErrors.partExists(part.partKode);
        throw toAppError(err);
      }
      journal.flushSoon(PARTS_COLLECTION, part.partKode);
    },

    /** Replaces the party's fields; EPVK-102404 when there is no such party. */
    async update(part: Part, audit: AuditContext): Promise<void> {
      const entry = entryFor(part.partKode, 'part.update', audit);
      await journal.register(entry, PARTS_COLLECTION, part.partKode);
      const result = await translated(() =>
        raw.updateOne(
          { _id: part.partKode },
          { $set: { ...fields(part), updatedAt: now() }, ...journalPush(entry) },
        ),
      );
      if (result.matchedCount === 0) throw privacyErrors.unknownPart(part.partKode);
      journal.flushSoon(PARTS_COLLECTION, part.partKode);
    },

    /** Creates the party unless it exists (built-in parties at start); true when it was created. */
    async ensure(part: Part, audit: AuditContext): Promise<boolean> {
      const entry = entryFor(part.partKode, 'part.create', audit);
      await journal.register(entry, PARTS_COLLECTION, part.partKode);
      const at = now();
      let upserted: number;
      try {
        const result = await raw.updateOne(
          { _id: part.partKode },
          {
            $setOnInsert: { ...fields(part), createdAt: at, updatedAt: at, journal: [entry] },
          },
          { upsert: true },
        );
        upserted = result.upsertedCount;
      } catch (err) {
        // Two replicas starting at once: the other one's upsert won the race.
        if (duplicateKeyInfo(err)) return false;
        throw toAppError(err);
      }
      if (upserted === 0) return false;
      journal.flushSoon(PARTS_COLLECTION, part.partKode);
      return true;
    },

    async find(partKode: string): Promise<Part | undefined> {
      const doc = await translated(() =>
        Parts.findById(partKode).select({ journal: 0 }).lean<PartDocument>().exec(),
      );
      return doc ? toPart(doc) : undefined;
    },

    async exists(partKode: string): Promise<boolean> {
      const doc = await translated(() => Parts.exists({ _id: partKode }).exec());
      return doc !== null;
    },

    async list(): Promise<Part[]> {
      const docs = await translated(() =>
        Parts.find().select({ journal: 0 }).sort({ _id: 1 }).lean<PartDocument[]>().exec(),
      );
      return docs.map(toPart);
    },
  };
}

export type PartRepository = ReturnType<typeof createPartRepository>;
