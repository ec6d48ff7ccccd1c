import { randomUUID } from 'node:crypto';
import type {
  NewProof,
  SettingHistoryEntry,
  SettingsStore,
  SettingState,
  SettingWriteRecord,
  StoredProof,
  StoredSetting,
  WriteOutcome,
} from '@nhp/privacy-domain';
import {
  duplicateKeyInfo,
  modelOf,
  pointReads,
  toAppError,
  translated,
} from '@nhp/shared-persistence';
import { Binary, type Collection } from 'mongodb';
import { Schema, type Connection } from 'mongoose';
import {
  JOURNAL_FIELD,
  journalPush,
  newJournalEntry,
  type Journal,
  type JournalEntry,
} from '../journal';

export const SETTINGS_COLLECTION = 'privacy_settings';
export const SETTING_COUNTERS_COLLECTION = 'privacy_setting_counters';
export const PROOFS_COLLECTION = 'privacy_proofs';

/**
 * The history in a setting's document keeps the last this many recorded requests (with the request
 * bounds of the contracts, a few MB at most: far from the 16 MiB document limit). Older ones stay in
 * the audit trail.
 */
export const SETTING_HISTORY_LIMIT = 400;

/** pagingKey is an int32 cursor for clients: a definition can hold this many instances. */
const INT32_MAX = 2_147_483_647;

/**
 * One document per citizen and definition: the current state at the top (what reads need), the
 * history of every recorded request in `history`, pending audit records and events in `journal`.
 * Every write is one conditional single-document write on `version` (optimistic concurrency), so
 * two simultaneous sets give consecutive sekvensnummer values and neither is lost. Reads project
 * `history` and `journal` out. Proof bytes live in `privacy_proofs` (one document per proof,
 * written before the setting write that references it), so no read of a setting loads them.
 */
interface SettingDocument extends Omit<
  SettingState,
  'id' | 'latestTidspunkt' | 'latestProofSha256'
> {
  _id: string;
  /** Absent in documents written before requests were ordered by the latest one (see toState). */
  latestTidspunkt?: Date;
  latestProofSha256?: string | null;
  version: number;
  history: SettingHistoryEntry[];
  journal?: JournalEntry[];
}

interface ProofDocument {
  _id: string;
  settingId: string;
  mimeType: string;
  sha256: string;
  size: number;
  bytes: Binary;
  registrert: Date;
}

interface CounterDocument {
  _id: string;
  last: number;
}

// Declared for the indexes (autoIndex, syncIndexes); documents are read and written through the
// driver's collection so that each write is exactly the one conditional update described above.
const settingSchema = new Schema(
  {
    _id: { type: String, required: true },
    innbyggerFnr: { type: String, required: true },
    definisjonGuid: { type: String, required: true },
    pagingKey: { type: Number, required: true },
  },
  { collection: SETTINGS_COLLECTION, versionKey: false, strict: false },
);
settingSchema.index(
  { innbyggerFnr: 1, definisjonGuid: 1 },
  { unique: true, name: 'fnr_definisjon' },
);
settingSchema.index(
  { definisjonGuid: 1, pagingKey: 1 },
  { unique: true, name: 'definisjon_paging' },
);

const proofSchema = new Schema(
  { _id: { type: String, required: true }, settingId: { type: String, required: true } },
  { collection: PROOFS_COLLECTION, versionKey: false, strict: false },
);
proofSchema.index({ settingId: 1 }, { name: 'setting' });

const STATE_PROJECTION = { history: 0, [JOURNAL_FIELD]: 0 } as const;
const WRITE_PROJECTION = { [JOURNAL_FIELD]: 0 } as const;

function toState(
  doc: Omit<SettingDocument, 'history' | 'version'> & { _id: string },
): SettingState {
  return {
    id: doc._id,
    innbyggerFnr: doc.innbyggerFnr,
    definisjonGuid: doc.definisjonGuid,
    partKode: doc.partKode,
    typePi: doc.typePi,
    aktiv: doc.aktiv,
    metadata: doc.metadata,
    sekvensnummer: doc.sekvensnummer,
    opprettetTidspunkt: doc.opprettetTidspunkt,
    sistEndretTidspunkt: doc.sistEndretTidspunkt,
    proofSha256: doc.proofSha256 ?? null,
    // A document from before the latest request was kept: its latest request was its last change.
    latestTidspunkt: doc.latestTidspunkt ?? doc.sistEndretTidspunkt,
    latestProofSha256:
      doc.latestProofSha256 === undefined ? (doc.proofSha256 ?? null) : doc.latestProofSha256,
    pagingKey: doc.pagingKey,
  };
}

export interface CreateSettingRepositoryOptions {
  connection: Connection;
  journal: Pick<Journal, 'register' | 'abandon' | 'flushSoon'>;
  /** Default SETTING_HISTORY_LIMIT (tests use a small one). */
  historyLimit?: number;
}

/** The settings' and proofs' models (registered once per connection), with their indexes. */
export function settingModels(connection: Connection) {
  return {
    Settings: modelOf(connection, 'PrivacySetting', settingSchema),
    Proofs: modelOf(connection, 'PrivacyProof', proofSchema),
  };
}

export function createSettingRepository(options: CreateSettingRepositoryOptions) {
  const { connection, journal } = options;
  const historyLimit = options.historyLimit ?? SETTING_HISTORY_LIMIT;
  const { Settings, Proofs } = settingModels(connection);
  const settings = Settings.collection as unknown as Collection<SettingDocument>;
  const proofs = Proofs.collection as unknown as Collection<ProofDocument>;
  const counters = connection.collection<CounterDocument>(SETTING_COUNTERS_COLLECTION);
  // The reads of the status check and of a set: one document by the unique citizen + definition
  // key (fnr_definisjon), without the connection's write concern or the driver's cursor, and those
  // asked for in one turn of the event loop in one command (see pointReads).
  const reads = pointReads<SettingDocument>(connection, SETTINGS_COLLECTION, {
    coalesceOn: ['innbyggerFnr', 'definisjonGuid'],
  });

  async function nextPagingKey(definisjonGuid: string): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        const counter = await counters.findOneAndUpdate(
          { _id: definisjonGuid },
          { $inc: { last: 1 } },
          { upsert: true, returnDocument: 'after' },
        );
        const key = counter?.last ?? 0;
        if (key < 1 || key > INT32_MAX) {
          throw new Error(`pagingKey of definition out of int32 range: ${key}`);
        }
        return key;
      } catch (err) {
        // Two first upserts of one counter race on its _id; the loser simply increments again.
        if (attempt < 3 && duplicateKeyInfo(err)) continue;
        throw err;
      }
    }
  }

  async function storeProof(settingId: string, proof: NewProof, registrert: Date): Promise<void> {
    await proofs.insertOne({
      _id: proof.id,
      settingId,
      mimeType: proof.mimeType,
      sha256: proof.sha256,
      size: proof.bytes.length,
      bytes: new Binary(proof.bytes),
      registrert,
    });
  }

  function journalEntry(
    record: SettingWriteRecord,
    id: string,
    state: Pick<SettingState, 'innbyggerFnr' | 'definisjonGuid' | 'partKode'>,
    at: Date,
  ): JournalEntry {
    return newJournalEntry(
      {
        actor: record.actor,
        operation: record.operation,
        target: {
          collection: SETTINGS_COLLECTION,
          key: id,
          fnr: state.innbyggerFnr,
          definisjonGuid: state.definisjonGuid,
          partKode: state.partKode,
        },
        ...(record.requestId !== undefined ? { requestId: record.requestId } : {}),
        ...(record.event ? { event: record.event } : {}),
      },
      at,
    );
  }

  const store: SettingsStore = {
    async find(innbyggerFnr, definisjonGuid) {
      // translated's rule written out: the status check's read, without a function and promise
      // more per check.
      let doc;
      try {
        doc = await reads.findOne(
          { innbyggerFnr, definisjonGuid },
          { projection: STATE_PROJECTION },
        );
      } catch (err) {
        throw toAppError(err);
      }
      return doc ? toState(doc) : undefined;
    },

    async findForWrite(innbyggerFnr, definisjonGuid): Promise<StoredSetting | undefined> {
      // A read too (every set's first command): the same collection without the write concern.
      const doc = await translated(() =>
        reads.findOne({ innbyggerFnr, definisjonGuid }, { projection: WRITE_PROJECTION }),
      );
      if (!doc) return undefined;
      return { state: toState(doc), version: doc.version, history: doc.history ?? [] };
    },

    async listForCitizen(innbyggerFnr, definisjonGuids) {
      if (definisjonGuids.length === 0) return [];
      const docs = await translated(() =>
        settings
          .find(
            { innbyggerFnr, definisjonGuid: { $in: definisjonGuids } },
            { projection: STATE_PROJECTION },
          )
          .toArray(),
      );
      return docs.map(toState);
    },

    async create({ state, entry, proof, record }): Promise<WriteOutcome> {
      const id = randomUUID();
      return translated(async () => {
        const pagingKey = await nextPagingKey(state.definisjonGuid);
        if (proof) await storeProof(id, proof, entry.registrert);
        const journalled = journalEntry(record, id, state, entry.registrert);
        await journal.register(journalled, SETTINGS_COLLECTION, id);
        try {
          await settings.insertOne({
            _id: id,
            ...state,
            pagingKey,
            version: 1,
            history: [entry],
            [JOURNAL_FIELD]: [journalled],
          });
        } catch (err) {
          // Another request created the instance first: the caller reads it and decides again.
          // The pointer just registered names a write that never happened: it goes now.
          if (duplicateKeyInfo(err)) {
            await journal.abandon(journalled);
            return 'conflict';
          }
          throw toAppError(err);
        }
        // A new document: its journal is exactly this entry.
        journal.flushSoon(SETTINGS_COLLECTION, id, [journalled]);
        return 'written';
      });
    },

    async update({ id, expectedVersion, state, entry, proof, record }): Promise<WriteOutcome> {
      return translated(async () => {
        if (proof) await storeProof(id, proof, entry.registrert);
        const journalled = journalEntry(record, id, state, entry.registrert);
        await journal.register(journalled, SETTINGS_COLLECTION, id);
        const { id: _id, ...fields } = state;
        const push = journalPush(journalled).$push;
        // The write answers with the document's pending journal entries, so that the relay
        // need not read them again (acknowledged with the write concern: durable, as the
        // relay's own majority read would see them).
        const written = await settings.findOneAndUpdate(
          { _id: id, version: expectedVersion },
          {
            $set: { ...fields, version: expectedVersion + 1 },
            $push: { history: { $each: [entry], $slice: -historyLimit }, ...push },
          },
          { projection: { _id: 0, [JOURNAL_FIELD]: 1 }, returnDocument: 'after' },
        );
        if (!written) {
          // Another change came first (its version): this write did not happen, nor its entry.
          await journal.abandon(journalled);
          return 'conflict';
        }
        journal.flushSoon(SETTINGS_COLLECTION, id, written[JOURNAL_FIELD] ?? []);
        return 'written';
      });
    },

    async pageActive(definisjonGuid, after, limit) {
      const docs = await translated(() =>
        settings
          .find(
            { definisjonGuid, pagingKey: { $gt: after }, aktiv: true },
            { projection: STATE_PROJECTION },
          )
          .sort({ pagingKey: 1 })
          .limit(limit)
          .toArray(),
      );
      return docs.map(toState);
    },

    async loadProofs(ids): Promise<StoredProof[]> {
      if (ids.length === 0) return [];
      const docs = await translated(() => proofs.find({ _id: { $in: ids } }).toArray());
      return docs.map((doc) => ({
        id: doc._id,
        settingId: doc.settingId,
        mimeType: doc.mimeType,
        bytes: Buffer.from(doc.bytes.buffer),
        registrert: doc.registrert,
      }));
    },
  };

  return {
    ...store,
    /** Builds the indexes now (tests, tools); the app relies on autoIndex or syncIndexes. */
    async ensureIndexes(): Promise<void> {
      await translated(async () => {
        await Settings.createIndexes();
        await Proofs.createIndexes();
      });
    },
  };
}

export type SettingRepository = ReturnType<typeof createSettingRepository>;
