// A collection: its records (insertion order is MongoDB's natural order), its indexes, and the write
// primitives every command goes through, so that unique indexes are enforced on every write path.
import { serialize, UUID } from 'bson';
import { MongoServerError } from './errors';
import {
  Index,
  ownBytes,
  Stored,
  type IndexSpec,
  type KeyParts,
  type NumericRange,
  type StoredRecord,
} from './indexes';
import { TopElements, topKey } from './raw';
import { rawOf } from './journal';
import { isPlainObject, newObjectId, toView, type Doc } from './values';

export const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;

export type { StoredRecord };

/**
 * Where every change to the store is recorded once it is made (the journal, persistence.ts); a
 * server purely in memory has none, and none is attached while the files are being replayed.
 */
export interface ChangeLog {
  created(coll: Collection): void;
  dropped(db: string, name: string): void;
  droppedDatabase(db: string): void;
  indexCreated(coll: Collection, spec: IndexSpec): void;
  indexDropped(coll: Collection, name: string): void;
  inserted(coll: Collection, record: StoredRecord): void;
  replaced(coll: Collection, record: StoredRecord): void;
  removed(coll: Collection, record: StoredRecord): void;
}

export class Collection {
  readonly uuid = new UUID();
  /** `records` and `indexes` once the collection is loaded (`loaded` says why they wait). */
  private readonly stored = new Set<StoredRecord>();
  private readonly byName = new Map<string, Index>();
  /**
   * Set while the documents read from the data files are not loaded yet (`deferLoad`): their
   * bytes, in natural order; `loadSome` loads them from `unloadedAt` on.
   */
  private unloaded: Uint8Array[] | undefined;
  private unloadedAt = 0;
  /** Set when loading found the stored documents damaged (`loadSome`): every access throws it. */
  private damage: MongoServerError | undefined;
  /** Set by the store (Store.attachLog); the write primitives below report to it. */
  log: ChangeLog | undefined;
  private seq = 0;
  /** Reads the top-level fields all indexes key on in one walk (`tops`). */
  private topsOfIndexes: TopElements | undefined;
  /** The same for the indexes whose trees are built (`tops`). */
  private topsOfBuilt: TopElements | undefined;

  constructor(
    readonly db: string,
    readonly name: string,
    readonly options: Doc = {},
  ) {
    this.byName.set('_id_', new Index({ v: 2, key: { _id: 1 }, name: '_id_' }, this.ns));
  }

  /** The documents, in natural order (insertion order); loads them first if start-up left them. */
  get records(): Set<StoredRecord> {
    this.loaded();
    return this.stored;
  }

  /** The indexes by name; loads the documents first if start-up left them (their trees need them). */
  get indexes(): Map<string, Index> {
    this.loaded();
    return this.byName;
  }

  /** How many documents it holds, loaded or not (start-up's log). */
  get documentCount(): number {
    return this.stored.size + (this.unloaded ? this.unloaded.length - this.unloadedAt : 0);
  }

  /** Why its documents cannot be served (`loadSome`), if they cannot. */
  get damaged(): MongoServerError | undefined {
    return this.damage;
  }

  /**
   * Whether start-up left documents to load: `deferLoad`, until `loadSome` has loaded them all.
   */
  get loadPending(): boolean {
    return this.unloaded !== undefined;
  }

  /**
   * From now on `load` only keeps the documents' bytes, in order, until the collection is first
   * used or `loadSome` loads them once the server answers (Persistence.finishStartup). Start-up after
   * a crash is an outage, and loading every collection was most of it, while many collections are
   * not needed at once; one the journal changes beyond appending to it is loaded there and then, by
   * its first lookup. Only for a collection nothing was loaded into yet.
   */
  deferLoad(): void {
    if (this.stored.size > 0) throw new Error(`${this.ns} cannot defer its load`);
    this.unloaded ??= [];
  }

  /**
   * Every access to the documents or the indexes comes through here (`records`, `indexes`): what
   * start-up left unloaded is loaded first, so a command never sees part of a collection.
   */
  private loaded(): void {
    if (this.damage) throw this.damage;
    if (this.unloaded) this.loadSome(Number.POSITIVE_INFINITY);
  }

  /**
   * Loads up to `limit` of the documents start-up left (`deferLoad`); true while some are left.
   * A document the unique indexes refuse (a duplicate key: the data files are damaged) marks the
   * collection damaged: that error is thrown, then, and by every later access, so no command is
   * answered from part of the documents, and a snapshot writes them back as they were read
   * (`rawsToSnapshot`) rather than losing any.
   */
  loadSome(limit: number): boolean {
    if (this.damage) throw this.damage;
    const raws = this.unloaded;
    if (!raws) return false;
    const end = Math.min(raws.length, this.unloadedAt + limit);
    try {
      while (this.unloadedAt < end) this.loadNow(raws[this.unloadedAt++] as Uint8Array);
    } catch (err) {
      this.damage = new MongoServerError(
        'InternalError',
        `${this.ns} cannot be served: its stored documents are damaged (${(err as Error).message})`,
      );
      throw this.damage;
    }
    if (this.unloadedAt < raws.length) return true;
    this.unloaded = undefined;
    this.unloadedAt = 0;
    return false;
  }

  /** The indexes' specs, loaded or not (a snapshot lists them). */
  indexSpecs(): IndexSpec[] {
    return [...this.byName.values()].map((i) => i.spec);
  }

  /**
   * The documents' bytes as a snapshot writes them, in natural order, without loading what is not
   * loaded yet: the records', then those left to load. When the collection is damaged, every
   * document as it was read, so that a snapshot keeps what the files held.
   */
  rawsToSnapshot(): Uint8Array[] {
    const left = this.unloaded ?? [];
    if (this.damage) return left;
    const raws = new Array<Uint8Array>(this.stored.size + left.length - this.unloadedAt);
    let i = 0;
    for (const r of this.stored) raws[i++] = rawOf(r);
    for (let j = this.unloadedAt; j < left.length; j++) raws[i++] = left[j] as Uint8Array;
    return raws;
  }

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  get idIndex(): Index {
    return this.indexes.get('_id_') as Index;
  }

  /** Validates and completes a document for storage: `_id` first (generated if missing), size limit. */
  prepare(doc: Doc): Doc {
    return this.prepareSized(doc).doc;
  }

  /** `wire`: the document's bytes as it arrived, kept when it is stored unchanged. */
  private prepareSized(doc: Doc, wire?: Uint8Array): { doc: Doc; size: number; raw: Uint8Array } {
    if (!isPlainObject(doc))
      throw new MongoServerError('BadValue', 'document to insert must be an object');
    let out = doc;
    if (!('_id' in doc)) out = { _id: newObjectId(), ...doc };
    else if (Object.keys(doc)[0] !== '_id') {
      const { _id, ...rest } = doc;
      out = { _id, ...rest };
    }
    const id = out['_id'];
    if (Array.isArray(id)) throw new MongoServerError('BadValue', "can't use an array for _id");
    if (id instanceof RegExp || (id as { _bsontype?: string } | null)?._bsontype === 'BSONRegExp') {
      throw new MongoServerError('BadValue', "can't use a regex for _id");
    }
    if (id === undefined) throw new MongoServerError('BadValue', "can't use undefined for _id");
    checkFieldNames(out);
    // The BSON bytes are kept beside the stored document (raw.ts): the insert's own when it is
    // stored as it arrived, else serialised now, so reads never serialise it. A document with a
    // repeated field name keeps both in its bytes, as mongod stores it (matching sees the last).
    const raw = out === doc && wire ? wire : serialize(out);
    const size = raw.length;
    if (size > MAX_BSON_OBJECT_SIZE) {
      throw new MongoServerError(
        'BadValue',
        `object to insert too large. size in bytes: ${size}, max size: ${MAX_BSON_OBJECT_SIZE}`,
      );
    }
    return { doc: out, size, raw };
  }

  insert(doc: Doc, wire?: Uint8Array): StoredRecord {
    const { raw } = this.prepareSized(doc, wire);
    return this.add(new Stored(ownBytes(raw), this.seq++));
  }

  /**
   * Stores a document given only as its BSON bytes, as it was stored before (snapshot load and
   * journal replay): nothing is decoded unless an index needs more than its top-level scalars.
   * `raw` is kept as given, even as a view into the chunk of the file it was read from: start-up
   * leaves giving each loaded document a buffer of its own to Store.ownLoadedBytes, once the server
   * answers (Persistence.finishStartup says why). Indexes whose build is deferred
   * (`restoreIndex`) are left alone: they are built from the records later.
   */
  load(raw: Uint8Array): void {
    if (this.unloaded) this.unloaded.push(raw);
    else this.loadNow(raw);
  }

  private loadNow(raw: Uint8Array): void {
    const record = new Stored(raw, this.seq++);
    // No checkUnique pass: what was stored was unique when written; Index.add still refuses a
    // duplicate key (a damaged data folder), which fails the start-up or marks the collection
    // damaged (`loadSome`).
    const tops = this.tops(true).read(record.raw);
    for (const index of this.byName.values()) {
      if (!index.deferred) index.add(record, index.keysOf(record, tops), true);
    }
    this.stored.add(record);
  }

  private add(record: StoredRecord): StoredRecord {
    const indexes = [...this.indexes.values()];
    const tops = record.raw ? this.tops().read(record.raw) : undefined;
    const keys = indexes.map((index) =>
      index.checkUnique(record, undefined, index.keysOf(record, tops)),
    );
    indexes.forEach((index, i) => index.add(record, keys[i]));
    this.records.add(record);
    this.log?.inserted(this, record);
    return record;
  }

  /**
   * Reads the top-level fields the indexes key on; `builtOnly`: those of the indexes whose trees
   * are built (what `load` adds to). Renewed when indexes are created, dropped or built here
   * (`buildDeferredIndexes`); an index built by its first lookup leaves the second reader short of
   * its fields, which only sends its keys the slow way (Index.keysOf decodes what was not read).
   */
  private tops(builtOnly = false): TopElements {
    const fieldsOf = (indexes: Index[]) => [...new Set(indexes.flatMap((i) => i.topLevelFields))];
    if (builtOnly) {
      this.topsOfBuilt ??= new TopElements(
        fieldsOf([...this.byName.values()].filter((i) => !i.deferred)),
      );
      return this.topsOfBuilt;
    }
    this.topsOfIndexes ??= new TopElements(fieldsOf([...this.byName.values()]));
    return this.topsOfIndexes;
  }

  private indexesChanged(): void {
    this.topsOfIndexes = undefined;
    this.topsOfBuilt = undefined;
  }

  /**
   * Adds up to `limit` records to the tree of an index whose build was deferred (`restoreIndex`);
   * false when none is left to build.
   */
  buildDeferredIndexes(limit: number): boolean {
    for (const index of this.indexes.values()) {
      if (!index.pending) continue;
      // Once begun, its tree takes every change, loaded documents included.
      if (index.deferred) this.indexesChanged();
      index.buildSome(limit);
      return true;
    }
    return false;
  }

  /**
   * Replaces a record's document after an update; the unique check happens before anything changes.
   * `touched` (the top-level fields a `$set`/`$unset` named) lets indexes on other fields be left
   * alone: their keys cannot have changed. Partial indexes are always re-keyed (their filter may
   * read any field). `knownRaw`: the document's BSON bytes when they are at hand (journal replay).
   */
  replace(
    record: StoredRecord,
    doc: Doc,
    touched?: ReadonlySet<string>,
    knownRaw?: Uint8Array,
  ): void {
    const raw = knownRaw ?? serialize(doc);
    const size = raw.length;
    if (size > MAX_BSON_OBJECT_SIZE) {
      throw new MongoServerError(
        'Location17419',
        `Resulting document after update is larger than ${MAX_BSON_OBJECT_SIZE}`,
      );
    }
    checkFieldNames(doc);
    this.replaceBytes(record, raw, touched);
  }

  /**
   * Replaces a record's bytes with `raw`, already checked. `replaying`: journal replay, whose bytes
   * are kept as given, as `load` keeps them, and which leaves deferred indexes alone as `load`
   * does (what it replays was valid when written). Any other write computes every index's keys,
   * deferred or not: that is what refuses a document a compound index cannot hold.
   */
  replaceBytes(
    record: StoredRecord,
    raw: Uint8Array,
    touched?: ReadonlySet<string>,
    replaying = false,
  ): void {
    const next = new Stored(replaying ? raw : ownBytes(raw));
    const affected = [...this.indexes.values()].filter(
      (i) => (!touched || i.readsAny(touched)) && !(replaying && i.deferred),
    );
    const tops = this.tops().read(next.raw);
    const keys = affected.map((index) => index.checkUnique(next, record, index.keysOf(next, tops)));
    const oldTops = record.raw ? this.tops().read(record.raw) : undefined;
    const oldKeys = affected.map((index) => index.keysOf(record, oldTops));
    record.raw = next.raw;
    affected.forEach((index, i) => {
      const before = oldKeys[i] as KeyParts[];
      const after = keys[i] as KeyParts[];
      // Most updates leave an index's keys as they were: the record stays where it is.
      if (sameKeys(before, after)) return;
      index.remove(record, before);
      index.add(record, after);
    });
    this.log?.replaced(this, record);
  }

  remove(record: StoredRecord): void {
    if (!this.records.delete(record)) return;
    for (const index of this.indexes.values()) index.remove(record);
    this.log?.removed(this, record);
  }

  /** The record whose `_id` equals `id` (a stored value), if any. */
  byId(id: unknown): StoredRecord | undefined {
    for (const r of this.idIndex.lookup([toView(id)])) return r;
    return undefined;
  }

  /** The record with the same `_id` as the document `raw` (journal replay); undefined if none. */
  byIdOf(raw: Uint8Array): StoredRecord | undefined {
    const key = topKey(raw, '_id');
    if (key === undefined) return this.byId(new Stored(raw).doc['_id']);
    for (const r of this.idIndex.lookupKey([key])) return r;
    return undefined;
  }

  /**
   * Records that may match a view filter (a superset; callers match each one): an index's entries
   * when the filter pins all its fields by equality or `$in`, else an index scan when it pins a
   * prefix of an index's fields and/or gives a numeric range on the field after that prefix, else
   * every record.
   */
  candidates(filter: Doc): Iterable<StoredRecord> {
    const direct = this.indexCandidates(filter);
    const or = filter['$or'];
    if (!Array.isArray(or) || or.length === 0 || !or.every(isPlainObject)) {
      return direct ?? this.records;
    }
    // A top-level `$or`: each branch, together with the rest of the filter, may be driven by an
    // index of its own (as mongod plans each branch separately); their union, in natural order,
    // is then the candidate set when it is smaller than what the rest of the filter gives alone.
    const { $or: _branches, ...rest } = filter;
    const seen = new Set<StoredRecord>();
    const limit = direct ? sizeOf(direct) : this.records.size;
    for (const branch of or as Doc[]) {
      const part = this.indexCandidates({ $and: [rest, branch] });
      if (!part) return direct ?? this.records;
      for (const r of part) seen.add(r);
      if (seen.size >= limit) return direct ?? this.records;
    }
    return [...seen].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  }

  /** Index-driven candidates for the filter's conditions outside `$or`; undefined: none apply. */
  private indexCandidates(filter: Doc): Iterable<StoredRecord> | undefined {
    const eq = equalities(filter);
    const ranges = numericRanges(filter);
    if (eq.size === 0 && ranges.size === 0) return undefined;
    let best: Index | undefined;
    let bestScan: { index: Index; prefix: number; range: boolean } | undefined;
    for (const index of this.indexes.values()) {
      if (!index.servesEquality) continue;
      if (index.fields.every((f) => eq.has(f))) {
        if (!best || (index.unique && !best.unique) || index.fields.length > best.fields.length)
          best = index;
        continue;
      }
      let prefix = 0;
      while (prefix < index.fields.length && eq.has(index.fields[prefix] as string)) prefix++;
      const range = ranges.has(index.fields[prefix] as string);
      if (prefix === 0 && !range) continue;
      const better =
        !bestScan ||
        prefix + (range ? 0.5 : 0) > bestScan.prefix + (bestScan.range ? 0.5 : 0) ||
        // Same shape: the shorter index has fewer keys per prefix to walk.
        (prefix === bestScan.prefix &&
          range === bestScan.range &&
          index.fields.length < bestScan.index.fields.length);
      if (better) bestScan = { index, prefix, range };
    }
    if (best) {
      const combos = valueCombos(best.fields, eq);
      if (!combos) return undefined;
      const out = new Set<StoredRecord>();
      for (const values of combos) for (const r of best.lookup(values)) out.add(r);
      return out;
    }
    if (!bestScan) return undefined;
    const { index, prefix, range } = bestScan;
    const combos = valueCombos(index.fields.slice(0, prefix), eq);
    if (!combos) return undefined;
    return index.scan(combos, range ? ranges.get(index.fields[prefix] as string) : undefined);
  }

  createIndex(spec: IndexSpec): boolean {
    const sameName = this.indexes.get(spec.name);
    const sameKey = [...this.indexes.values()].find((i) => sameKeyPattern(i.spec.key, spec.key));
    if (sameName) {
      if (!sameKeyPattern(sameName.spec.key, spec.key)) {
        throw new MongoServerError(
          'IndexKeySpecsConflict',
          `An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(sameName.spec)}`,
        );
      }
      if (!sameOptions(sameName.spec, spec)) {
        throw new MongoServerError(
          'IndexOptionsConflict',
          `An equivalent index already exists with the same name but different options. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(sameName.spec)}`,
        );
      }
      return false;
    }
    // Several indexes may share a key pattern only when their partial filters differ.
    if (
      sameKey &&
      JSON.stringify(sameKey.spec.partialFilterExpression ?? null) ===
        JSON.stringify(spec.partialFilterExpression ?? null)
    ) {
      throw new MongoServerError(
        'IndexOptionsConflict',
        `Index already exists with a different name: ${sameKey.name}`,
      );
    }
    const index = new Index(spec, this.ns);
    for (const record of this.records) index.add(record, index.checkUnique(record));
    this.indexes.set(spec.name, index);
    this.indexesChanged();
    this.log?.indexCreated(this, spec);
    return true;
  }

  /**
   * An index as a snapshot lists it, before the collection's documents are loaded. A non-unique
   * one is built once first needed, or once the server answers (Store.buildDeferredIndexes),
   * rather than document by document as they load: start-up after a crash is an outage, and
   * building every index's tree was most of it (tools/mongo-server/README.md, "Persistence"). A
   * unique one is built as the documents load: it is what refuses a duplicate on every write, and
   * a damaged data folder holding one then fails the start-up.
   */
  restoreIndex(spec: IndexSpec): void {
    this.createIndex(spec);
    const index = this.indexes.get(spec.name) as Index;
    if (!index.unique && this.records.size === 0) {
      index.deferBuild(this.records);
      this.indexesChanged();
    }
  }

  /** Drops an index by name; false when there is none. The `_id_` index is the caller's to refuse. */
  dropIndex(name: string): boolean {
    if (!this.indexes.delete(name)) return false;
    this.indexesChanged();
    this.log?.indexDropped(this, name);
    return true;
  }
}

function sameKeys(a: KeyParts[], b: KeyParts[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as KeyParts;
    const y = b[i] as KeyParts;
    if (x.length !== y.length) return false;
    for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  }
  return true;
}

function sizeOf(c: Iterable<StoredRecord>): number {
  return c instanceof Set ? c.size : Array.isArray(c) ? c.length : Number.POSITIVE_INFINITY;
}

function sameKeyPattern(a: Doc, b: Doc): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length && ka.every((k, i) => k === kb[i] && Number(a[k]) === Number(b[k]))
  );
}

function sameOptions(a: IndexSpec, b: IndexSpec): boolean {
  return (
    Boolean(a.unique) === Boolean(b.unique) &&
    Boolean(a.sparse) === Boolean(b.sparse) &&
    JSON.stringify(a.partialFilterExpression ?? null) ===
      JSON.stringify(b.partialFilterExpression ?? null) &&
    (a.expireAfterSeconds ?? null) === (b.expireAfterSeconds ?? null)
  );
}

const isIndexableScalar = (v: unknown): boolean => {
  if (v === null || v === undefined) return false;
  if (typeof v === 'number') return !Number.isNaN(v);
  if (typeof v === 'string' || typeof v === 'boolean') return true;
  if (v instanceof Date) return true;
  const t = (v as { _bsontype?: string })._bsontype;
  return t === 'ObjectId' || t === 'Binary';
};

/** Field -> possible values, for the fields a filter pins by equality or `$in` (top level and `$and`). */
function equalities(filter: Doc, out = new Map<string, unknown[]>()): Map<string, unknown[]> {
  for (const [field, cond] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(cond)) {
      for (const part of cond) if (isPlainObject(part)) equalities(part, out);
      continue;
    }
    if (field.startsWith('$')) continue;
    if (isIndexableScalar(cond)) out.set(field, [cond]);
    else if (isPlainObject(cond)) {
      if ('$eq' in cond && isIndexableScalar(cond['$eq'])) out.set(field, [cond['$eq']]);
      else if (Array.isArray(cond['$in']) && cond['$in'].every(isIndexableScalar))
        out.set(field, cond['$in']);
    }
  }
  return out;
}

/** The value tuples an equality/`$in` filter allows on `fields`; undefined when there are too many. */
function valueCombos(fields: string[], eq: Map<string, unknown[]>): unknown[][] | undefined {
  let combos: unknown[][] = [[]];
  for (const f of fields) {
    const vals = eq.get(f) as unknown[];
    combos = combos.flatMap((c) => vals.map((v) => [...c, v]));
    if (combos.length > 10_000) return undefined;
  }
  return combos;
}

const RANGE_OPS = ['$gt', '$gte', '$lt', '$lte'];

/**
 * Field -> numeric bounds, for the fields a filter constrains with `$gt`/`$gte`/`$lt`/`$lte` on a
 * number (top level and `$and`). Other operators beside them are ignored: they only narrow the
 * matches further, and every candidate is matched against the whole filter anyway.
 */
function numericRanges(
  filter: Doc,
  out = new Map<string, NumericRange>(),
): Map<string, NumericRange> {
  for (const [field, cond] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(cond)) {
      for (const part of cond) if (isPlainObject(part)) numericRanges(part, out);
      continue;
    }
    if (field.startsWith('$') || !isPlainObject(cond)) continue;
    let range: NumericRange | undefined = out.get(field);
    for (const op of RANGE_OPS) {
      const v = cond[op];
      if (!(op in cond) || typeof v !== 'number' || Number.isNaN(v)) continue;
      const r: NumericRange = range ?? {};
      if (op === '$gt' || op === '$gte') {
        const inclusive = op === '$gte';
        if (r.lo === undefined || v > r.lo || (v === r.lo && !inclusive)) {
          r.lo = v;
          r.loInclusive = inclusive;
        }
      } else {
        const inclusive = op === '$lte';
        if (r.hi === undefined || v < r.hi || (v === r.hi && !inclusive)) {
          r.hi = v;
          r.hiInclusive = inclusive;
        }
      }
      range = r;
    }
    if (range) out.set(field, range);
  }
  return out;
}

/**
 * Field names as MongoDB 5.0+ stores them: top-level and embedded names may start with `$` or hold
 * dots ("Field Names with Periods and Dollar Signs"), but `_id`, when it is a document, may not
 * hold `$`-prefixed names at any depth (mongod: DollarPrefixedFieldName, "_id fields may not
 * contain '$'-prefixed fields"). Replacement documents are checked for top-level `$` names where
 * they are parsed (update.ts), since pipeline updates may store them.
 */
function checkFieldNames(doc: Doc): void {
  const id = doc['_id'];
  if (id !== null && typeof id === 'object') checkIdNames(id);
}

function checkIdNames(v: unknown): void {
  if (Array.isArray(v)) {
    for (const e of v) if (e !== null && typeof e === 'object') checkIdNames(e);
    return;
  }
  if (!isPlainObject(v)) return;
  for (const k of Object.keys(v)) {
    if (k.startsWith('$')) {
      throw new MongoServerError(
        'DollarPrefixedFieldName',
        `_id fields may not contain '$'-prefixed fields: ${k} is not valid for storage.`,
      );
    }
    const e = v[k];
    if (e !== null && typeof e === 'object') checkIdNames(e);
  }
}
