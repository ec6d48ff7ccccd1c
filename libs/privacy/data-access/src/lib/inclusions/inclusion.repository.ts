import { AppError } from '@nhp/shared-errors';
import { DUPLICATE_KEY_CONFLICT, modelOf, toAppError, translated } from '@nhp/shared-persistence';
import type { Inclusion, InclusionChange, InclusionStore } from '@nhp/privacy-domain';
import { PRIVACY_CODES, type InkluderingType } from '@nhp/privacy-contracts';
import { Schema, type Connection } from 'mongoose';
import {
  JOURNAL_FIELD,
  journalPush,
  newJournalEntry,
  type Journal,
  type JournalEntry,
} from '../journal';

/**
 * Inclusions: one document per citizen and definition holding the current state, the history of
 * its changes (newest `HISTORY_LIMIT`; the audit trail keeps every one) and the journal entries
 * not yet relayed. Each change is one conditional single-document write (compare-and-set on
 * `rev`), so the state, its history and its audit record land together or not at all.
 */
export const INCLUSIONS_COLLECTION = 'privacy_inclusions';
const HISTORY_LIMIT = 1000;
const MAX_ATTEMPTS = 5;

export interface InclusionHistoryItem {
  inkluderingType: InkluderingType;
  aktiv: boolean;
  at: Date;
  /** The client id of the system that made the change. */
  clientId: string | null;
  requestId: string | null;
}

export interface StoredInclusion extends Inclusion {
  opprettetTidspunkt: Date;
  sistEndretTidspunkt: Date;
  history: InclusionHistoryItem[];
}

interface InclusionDocument extends StoredInclusion {
  _id: string;
  rev: number;
  [JOURNAL_FIELD]: JournalEntry[];
}

const inclusionSchema = new Schema<InclusionDocument>(
  {
    _id: { type: String, required: true },
    innbyggerFnr: { type: String, required: true },
    definisjonGuid: { type: String, required: true },
    partKode: { type: String, required: true },
    inkluderingType: { type: String, required: true },
    aktiv: { type: Boolean, required: true },
    rev: { type: Number, required: true },
    opprettetTidspunkt: { type: Date, required: true },
    sistEndretTidspunkt: { type: Date, required: true },
    history: { type: Schema.Types.Mixed, default: [] },
    [JOURNAL_FIELD]: { type: Schema.Types.Mixed, default: [] },
  },
  { collection: INCLUSIONS_COLLECTION, versionKey: false, strict: 'throw' },
);
// Readers by definition (e.g. a party listing its study's participants) and by citizen.
inclusionSchema.index({ definisjonGuid: 1, innbyggerFnr: 1 }, { name: 'definisjon_fnr' });
inclusionSchema.index({ innbyggerFnr: 1 }, { name: 'fnr' });

/** The document key: one inclusion per citizen and definition. */
export function inclusionKey(innbyggerFnr: string, definisjonGuid: string): string {
  return `${innbyggerFnr}/${definisjonGuid.toLowerCase()}`;
}

function toStored(doc: InclusionDocument): StoredInclusion {
  return {
    innbyggerFnr: doc.innbyggerFnr,
    definisjonGuid: doc.definisjonGuid,
    partKode: doc.partKode,
    inkluderingType: doc.inkluderingType,
    aktiv: doc.aktiv,
    opprettetTidspunkt: doc.opprettetTidspunkt,
    sistEndretTidspunkt: doc.sistEndretTidspunkt,
    history: doc.history,
  };
}

export interface InclusionRepository extends InclusionStore {
  find(innbyggerFnr: string, definisjonGuid: string): Promise<StoredInclusion | undefined>;
}

export interface CreateInclusionRepositoryOptions {
  connection: Connection;
  journal: Journal;
}

/** The model (registered once per connection), with the indexes its schema declares. */
export function inclusionModel(connection: Connection) {
  return modelOf<InclusionDocument>(connection, 'PrivacyInclusion', inclusionSchema);
}
export function createInclusionRepository(
  options: CreateInclusionRepositoryOptions,
): InclusionRepository {
  const { connection, journal } = options;
  const Inclusions = inclusionModel(connection);
  // Writes go through the driver: the journal entry and history item are plain values that
  // mongoose's casting must not touch, and the compare-and-set needs the raw update result.
  const collection = () => connection.collection<InclusionDocument>(INCLUSIONS_COLLECTION);

  async function current(id: string): Promise<InclusionDocument | null> {
    return translated(() =>
      Inclusions.findById(id, { [JOURNAL_FIELD]: 0, history: 0 })
        .lean<InclusionDocument>()
        .exec(),
    );
  }

  /** One attempt; false when another writer changed the document first. */
  async function attempt(change: InclusionChange, id: string): Promise<'same' | 'done' | 'raced'> {
    const existing = await current(id);
    if (
      existing &&
      existing.inkluderingType === change.inkluderingType &&
      existing.aktiv === change.aktiv
    ) {
      return 'same';
    }
    const clientId = change.actor.clientId ?? null;
    const entry = newJournalEntry(
      {
        actor: { kind: 'client', id: clientId ?? 'unknown' },
        operation: change.aktiv ? 'inclusion.set' : 'inclusion.end',
        target: {
          collection: INCLUSIONS_COLLECTION,
          key: id,
          fnr: change.innbyggerFnr,
          definisjonGuid: change.definisjonGuid,
          partKode: change.partKode,
        },
        ...(change.requestId === undefined ? {} : { requestId: change.requestId }),
      },
      change.at,
    );
    const item: InclusionHistoryItem = {
      inkluderingType: change.inkluderingType,
      aktiv: change.aktiv,
      at: change.at,
      clientId,
      requestId: change.requestId ?? null,
    };
    await journal.register(entry, INCLUSIONS_COLLECTION, id);

    if (!existing) {
      try {
        await collection().insertOne({
          _id: id,
          innbyggerFnr: change.innbyggerFnr,
          definisjonGuid: change.definisjonGuid,
          partKode: change.partKode,
          inkluderingType: change.inkluderingType,
          aktiv: change.aktiv,
          rev: 1,
          opprettetTidspunkt: change.at,
          sistEndretTidspunkt: change.at,
          history: [item],
          [JOURNAL_FIELD]: [entry],
        });
        return 'done';
      } catch (err) {
        const appError = toAppError(err);
        if (appError.code === DUPLICATE_KEY_CONFLICT) return 'raced';
        throw appError;
      }
    }
    const result = await translated(() =>
      collection().updateOne(
        { _id: id, rev: existing.rev },
        {
          $set: {
            inkluderingType: change.inkluderingType,
            aktiv: change.aktiv,
            partKode: change.partKode,
            sistEndretTidspunkt: change.at,
            rev: existing.rev + 1,
          },
          $push: {
            history: { $each: [item], $slice: -HISTORY_LIMIT },
            ...journalPush(entry).$push,
          },
        },
      ),
    );
    return result.matchedCount === 1 ? 'done' : 'raced';
  }

  return {
    async setInclusion(change) {
      const id = inclusionKey(change.innbyggerFnr, change.definisjonGuid);
      for (let i = 0; i < MAX_ATTEMPTS; i += 1) {
        const outcome = await attempt(change, id);
        if (outcome === 'same') return { changed: false };
        if (outcome === 'done') {
          journal.flushSoon(INCLUSIONS_COLLECTION, id);
          return { changed: true };
        }
      }
      // Only under a storm of concurrent changes of one inclusion; nothing was written by this
      // request, so the client may retry.
      throw new AppError({
        code: PRIVACY_CODES.internal,
        status: 500,
        operational: true,
        expose: true,
        message: 'The inclusion is being changed concurrently; retry',
      });
    },

    async find(innbyggerFnr, definisjonGuid) {
      const doc = await translated(() =>
        Inclusions.findById(inclusionKey(innbyggerFnr, definisjonGuid), { [JOURNAL_FIELD]: 0 })
          .lean<InclusionDocument>()
          .exec(),
      );
      return doc ? toStored(doc) : undefined;
    },
  };
}
