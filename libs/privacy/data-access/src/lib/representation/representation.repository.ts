import type { RepresentationRelationship, RepresentationStore } from '@nhp/privacy-domain';
import { modelOf, translated } from '@nhp/shared-persistence';
import { Schema, type Connection } from 'mongoose';
import {
  JOURNAL_FIELD,
  journalPush,
  newJournalEntry,
  type Journal,
  type JournalEntry,
} from '../journal';

/**
 * Representation relationships: one document per caller (keyed by the caller's fnr) holding the
 * whole list, so that an import replaces a caller's relationships in one atomic write: a reader
 * sees the old list or the new one, never a mixture.
 */
export const REPRESENTATION_COLLECTION = 'privacy_representation';

interface RepresentationDocument {
  _id: string;
  relationships: RepresentationRelationship[];
  importedAt: Date;
  importId: string;
  [JOURNAL_FIELD]: JournalEntry[];
}

const representationSchema = new Schema<RepresentationDocument>(
  {
    _id: { type: String, required: true },
    relationships: { type: Schema.Types.Mixed, default: [] },
    importedAt: { type: Date, required: true },
    importId: { type: String, required: true },
    [JOURNAL_FIELD]: { type: Schema.Types.Mixed, default: [] },
  },
  { collection: REPRESENTATION_COLLECTION, versionKey: false, strict: 'throw' },
);

export type { ImportOptions } from '@nhp/privacy-domain';
/** The domain's representation store, kept in MongoDB. */
export type RepresentationRepository = RepresentationStore;

function plain(r: RepresentationRelationship): RepresentationRelationship {
  return {
    annenFnr: r.annenFnr,
    eksternProfilGuid: r.eksternProfilGuid,
    fornavn: r.fornavn,
    mellomnavn: r.mellomnavn,
    etternavn: r.etternavn,
    representasjonsforholdType: r.representasjonsforholdType,
    annenAdresse: r.annenAdresse,
  };
}

export interface CreateRepresentationRepositoryOptions {
  connection: Connection;
  journal: Journal;
}

/** The model (registered once per connection), with the indexes its schema declares. */
export function representationModel(connection: Connection) {
  return modelOf<RepresentationDocument>(connection, 'PrivacyRepresentation', representationSchema);
}
export function createRepresentationRepository(
  options: CreateRepresentationRepositoryOptions,
): RepresentationRepository {
  const { connection, journal } = options;
  const Representation = representationModel(connection);
  const collection = () => connection.collection<RepresentationDocument>(REPRESENTATION_COLLECTION);

  return {
    async findRelationships(fnr) {
      const doc = await translated(() =>
        Representation.findById(fnr, { relationships: 1 }).lean<RepresentationDocument>().exec(),
      );
      return (doc?.relationships ?? []).map(plain);
    },

    async replaceRelationships(byFnr, options) {
      let written = 0;
      for (const [fnr, relationships] of byFnr) {
        const entry = newJournalEntry(
          {
            actor: { kind: 'admin', id: options.actorId },
            operation: 'representation.import',
            target: { collection: REPRESENTATION_COLLECTION, key: fnr, fnr },
            requestId: options.importId,
          },
          options.at,
        );
        await journal.register(entry, REPRESENTATION_COLLECTION, fnr);
        await translated(() =>
          collection().updateOne(
            { _id: fnr },
            {
              $set: {
                relationships: relationships.map(plain),
                importedAt: options.at,
                importId: options.importId,
              },
              ...journalPush(entry),
            },
            { upsert: true },
          ),
        );
        journal.flushSoon(REPRESENTATION_COLLECTION, fnr);
        written += 1;
      }
      return written;
    },
  };
}
