import {
  privacyErrors,
  type Definition,
  type DefinitionChanges,
  type DefinitionLookup,
  type Relasjon,
} from '@nhp/privacy-domain';
import { duplicateKeyInfo, modelOf, toAppError, translated } from '@nhp/shared-persistence';
import { LRUCache } from 'lru-cache';
import type { Collection } from 'mongodb';
import { Schema, type Connection } from 'mongoose';
import { cacheTiming, DEFAULT_CACHE_TTL_MS, type AuditContext } from '../audit-context';
import { journalPush, newJournalEntry, type Journal, type JournalEntry } from '../journal';

export const DEFINITIONS_COLLECTION = 'privacy_definitions';

export type { DefinitionChanges } from '@nhp/privacy-domain';

/** The stored shape: the domain's Definition keyed by its GUID, with timestamps and the journal. */
interface DefinitionDocument extends Omit<Definition, 'definisjonGuid'> {
  /** definisjonGuid in lower case. */
  _id: string;
  createdAt: Date;
  updatedAt: Date;
  journal?: JournalEntry[];
}

const definitionSchema = new Schema<DefinitionDocument>(
  {
    _id: { type: String, required: true },
    definisjonMalGuid: { type: String, required: true },
    partKode: { type: String, required: true },
    navn: { type: String, default: null },
    beskrivelse: { type: String, default: null },
    visning: { type: String, default: null },
    fullstendigTekstInnhold: { type: String, default: null },
    kravTilLesingAvFullstendigTekst: { type: Boolean, required: true },
    sortering: { type: Number, default: null },
    replikering: { type: Boolean, required: true },
    relasjoner: {
      type: [
        new Schema<Relasjon>(
          {
            definisjonGuid: { type: String, required: true },
            relasjonType: { type: String, default: null },
            beskrivelse: { type: String, default: null },
          },
          { _id: false },
        ),
      ],
      default: [],
    },
    status: { type: String, required: true },
    typePi: { type: String, required: true },
    fasteMetadata: { type: Schema.Types.Mixed, required: true },
    takesPeriods: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    journal: { type: [Schema.Types.Mixed], default: undefined, select: false },
  },
  { collection: DEFINITIONS_COLLECTION, versionKey: false, strict: 'throw' },
);
// A party's definitions, in a stable order (settings for a party, listings).
definitionSchema.index({ partKode: 1, _id: 1 }, { name: 'part_definition' });

const normalise = (guid: string) => guid.toLowerCase();

function toDefinition(doc: DefinitionDocument): Definition {
  return {
    definisjonGuid: doc._id,
    definisjonMalGuid: doc.definisjonMalGuid,
    partKode: doc.partKode,
    navn: doc.navn ?? null,
    beskrivelse: doc.beskrivelse ?? null,
    visning: doc.visning ?? null,
    fullstendigTekstInnhold: doc.fullstendigTekstInnhold ?? null,
    kravTilLesingAvFullstendigTekst: doc.kravTilLesingAvFullstendigTekst,
    sortering: doc.sortering ?? null,
    replikering: doc.replikering,
    relasjoner: (doc.relasjoner ?? []).map((r) => ({
      definisjonGuid: r.definisjonGuid,
      relasjonType: r.relasjonType ?? null,
      beskrivelse: r.beskrivelse ?? null,
    })),
    status: doc.status,
    typePi: doc.typePi,
    fasteMetadata: doc.fasteMetadata,
    takesPeriods: doc.takesPeriods,
  };
}

export interface CreateDefinitionRepositoryOptions {
  connection: Connection;
  journal: Journal;
  now?: () => Date;
  /**
   * How long a definition read stays in this process's memory (default 5 s; 0 turns the cache
   * off). Writes through this repository drop their entry at once; a change made by another
   * replica is seen here within this time at most.
   */
  cacheTtlMs?: number;
  /**
   * Called with the key of each entry this repository changed, after the write: the app tells
   * the other instances (an internal NATS subject), which `forget` it within a second.
   */
  onChanged?: (key: string) => void;
}

/**
 * Setting definitions, keyed by definisjonGuid in lower case. Implements the domain's
 * DefinitionLookup. Reads of single definitions are cached briefly (every setting request looks
 * one up); only found definitions are cached, so a definition created anywhere is usable at once.
 */

/** The model (registered once per connection), with the indexes its schema declares. */
export function definitionModel(connection: Connection) {
  return modelOf<DefinitionDocument>(connection, 'PrivacyDefinition', definitionSchema);
}
export function createDefinitionRepository(options: CreateDefinitionRepositoryOptions) {
  const { connection, journal } = options;
  const now = options.now ?? (() => new Date());
  const ttl = options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const cache =
    ttl > 0 ? new LRUCache<string, Definition>({ max: 10_000, ...cacheTiming(ttl) }) : undefined;
  const Definitions = definitionModel(connection);
  // Writes go through the driver: the journal entry must land exactly as built, uncast.
  const raw = Definitions.collection as unknown as Collection<DefinitionDocument>;

  function entryFor(
    definisjonGuid: string,
    partKode: string,
    operation: string,
    audit: AuditContext,
  ): JournalEntry {
    return newJournalEntry(
      {
        actor: audit.actor,
        operation,
        target: {
          collection: DEFINITIONS_COLLECTION,
          key: definisjonGuid,
          definisjonGuid,
          partKode,
        },
        requestId: audit.requestId,
      },
      now(),
    );
  }

  function documentOf(definition: Definition, at: Date, entry: JournalEntry): DefinitionDocument {
    const { definisjonGuid, ...fields } = definition;
    return {
      _id: normalise(definisjonGuid),
      ...fields,
      relasjoner: fields.relasjoner.map((r) => ({
        ...r,
        definisjonGuid: normalise(r.definisjonGuid),
      })),
      createdAt: at,
      updatedAt: at,
      journal: [entry],
    };
  }

  async function findDefinition(definisjonGuid: string): Promise<Definition | undefined> {
    const id = normalise(definisjonGuid);
    const cached = cache?.get(id);
    if (cached) return cached;
    const doc = await translated(() =>
      Definitions.findById(id).select({ journal: 0 }).lean<DefinitionDocument>().exec(),
    );
    if (!doc) return undefined;
    const definition = toDefinition(doc);
    cache?.set(id, definition);
    return definition;
  }

  return {
    findDefinition,

    async listDefinitionsOfPart(partKode: string): Promise<Definition[]> {
      const docs = await translated(() =>
        Definitions.find({ partKode })
          .select({ journal: 0 })
          .sort({ _id: 1 })
          .lean<DefinitionDocument[]>()
          .exec(),
      );
      return docs.map(toDefinition);
    },

    /** The ids among `guids` that name no definition (relations must name existing ones). */
    async missing(guids: readonly string[]): Promise<string[]> {
      const ids = [...new Set(guids.map(normalise))];
      if (ids.length === 0) return [];
      const docs = await translated(() =>
        Definitions.find({ _id: { $in: ids } })
          .select({ _id: 1 })
          .lean<Array<{ _id: string }>>()
          .exec(),
      );
      const found = new Set(docs.map((d) => d._id));
      return ids.filter((id) => !found.has(id));
    },

    /** Stores a new definition; EPVK-103409 when the definisjonGuid exists. */
    async create(definition: Definition, audit: AuditContext): Promise<void> {
      const id = normalise(definition.definisjonGuid);
      const entry = entryFor(id, definition.partKode, 'definition.create', audit);
      await journal.register(entry, DEFINITIONS_COLLECTION, id);
      try {
        await raw.insertOne(documentOf(definition, now(), entry));
      } catch (err) {
        if (duplicateKeyInfo(err)) throw privacyErrors.definitionExists();
        throw toAppError(err);
      }
      journal.flushSoon(DEFINITIONS_COLLECTION, id);
    },

    /** Creates the definition unless it exists (built-in definitions at start). */
    async ensure(definition: Definition, audit: AuditContext): Promise<boolean> {
      const id = normalise(definition.definisjonGuid);
      const entry = entryFor(id, definition.partKode, 'definition.create', audit);
      await journal.register(entry, DEFINITIONS_COLLECTION, id);
      const { _id, ...doc } = documentOf(definition, now(), entry);
      let upserted: number;
      try {
        upserted = (await raw.updateOne({ _id }, { $setOnInsert: doc }, { upsert: true }))
          .upsertedCount;
      } catch (err) {
        // Two replicas starting at once: the other one's upsert won the race.
        if (duplicateKeyInfo(err)) return false;
        throw toAppError(err);
      }
      if (upserted === 0) return false;
      journal.flushSoon(DEFINITIONS_COLLECTION, id);
      return true;
    },

    /**
     * Applies the changes; EPVK-101500 when no such definition exists. No changes: only the
     * existence is checked and nothing is written.
     */
    async update(
      definisjonGuid: string,
      changes: DefinitionChanges,
      audit: AuditContext,
    ): Promise<void> {
      const id = normalise(definisjonGuid);
      const set = Object.fromEntries(
        Object.entries(changes).filter(([, value]) => value !== undefined),
      );
      if (Object.keys(set).length === 0) {
        if (!(await findDefinition(id))) throw privacyErrors.unknownDefinition();
        return;
      }
      const existing = await findDefinition(id);
      if (!existing) throw privacyErrors.unknownDefinition();
      const entry = entryFor(id, existing.partKode, 'definition.update', audit);
      await journal.register(entry, DEFINITIONS_COLLECTION, id);
      cache?.delete(id);
      const result = await translated(() =>
        raw.updateOne({ _id: id }, { $set: { ...set, updatedAt: now() }, ...journalPush(entry) }),
      );
      cache?.delete(id);
      if (result.matchedCount === 0) throw privacyErrors.unknownDefinition();
      options.onChanged?.(id);
      journal.flushSoon(DEFINITIONS_COLLECTION, id);
    },

    /** Drops one cached definition, when another instance announced a change of it. */
    forget(definisjonGuid: string): void {
      cache?.delete(normalise(definisjonGuid));
    },

    /** Forgets cached reads (tests that change definitions behind the repository's back). */
    clearCache(): void {
      cache?.clear();
    },
  } satisfies DefinitionLookup & Record<string, unknown>;
}

export type DefinitionRepository = ReturnType<typeof createDefinitionRepository>;
