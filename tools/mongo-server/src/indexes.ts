// Secondary structures over a collection's records: every index (including _id_) is one tree of
// Maps, field by field, from the canonical key of a field's value (values.ts keyOf) to the next
// field's Map, and at the last field to the records holding that key. The same tree serves point
// lookups (walk every field), prefix scans (walk the prefix, collect below) and numeric range scans
// (the keys of numbers are `n<number>`). Unique indexes reject a second record with the same key;
// all indexes serve equality lookups so that find by _id or a unique key does not scan the
// collection. Keys of top-level scalar fields are read from the stored bytes (raw.ts topKey).
import { compileFilter, type Matcher } from './engine';
import { MongoServerError } from './errors';
import { deserialize } from 'bson';
import { keyAtPath, TopElements } from './raw';
import { formatValue, keyOf, toView, toViewDoc, valuesAtPath, type Doc } from './values';
import { DESERIALIZE } from './wire';

export interface StoredRecord {
  /** The document with its exact BSON types (a `Stored` record decodes it from `raw` on each read). */
  readonly doc: Doc;
  /** Its view (values.ts; a `Stored` record decodes it from `raw` on each read). */
  readonly view: Doc;
  /** Insertion sequence (natural order); results gathered from several index keys follow it. */
  seq?: number;
  /** BSON size of `doc`, when known (an upper bound for what a plain projection returns). */
  size?: number;
  /** The BSON bytes of `doc` (raw.ts), set by every write. */
  raw?: Uint8Array;
}

/** What index keys are computed from: a document's bytes, and its view when the bytes do not do. */
export interface KeySource {
  readonly raw?: Uint8Array;
  readonly view: Doc;
}

/**
 * A stored document as a collection keeps it: its BSON bytes only (the stored form, exact types:
 * what reads send and the journal writes). Index keys and the scalar fast paths of filters and
 * sorts read single fields from the bytes (raw.ts); the typed document and the view (what mingo
 * reads) are decoded from the bytes whenever a caller asks for them. Kept decoded, the view alone
 * took twice the bytes' size, and the typed document more (README "Memory"). The bytes are always
 * a buffer of their own (`ownBytes`), never a view into a larger one that they would keep alive.
 */
export class Stored implements StoredRecord {
  constructor(
    public raw: Uint8Array,
    public seq?: number,
  ) {}

  get doc(): Doc {
    return deserialize(this.raw, DESERIALIZE) as Doc;
  }

  get view(): Doc {
    return toViewDoc(deserialize(this.raw, DESERIALIZE) as Doc);
  }

  get size(): number {
    return this.raw.length;
  }
}

/**
 * `bytes` in a buffer of their own. A document's bytes often arrive as a view into something
 * larger: the wire message it came in (small ones share Node's 8 KiB buffer pool with whatever
 * else was allocated then), the 8 MiB chunk of the data file or journal it was read from, or a
 * pool slice from `serialize`. Kept as such, one small document held the whole of it: that is
 * what made the server's memory grow with the traffic instead of the data.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  // allocUnsafeSlow: never from the shared pool (a pool slice would be a view of 8 KiB again).
  const own = Buffer.allocUnsafeSlow(bytes.byteLength);
  own.set(bytes);
  return own;
}

/**
 * One level of an index's tree: the keys of one field's values, each leading to the next field's
 * level, or at the last field to the records holding that key.
 */
type Level = Map<string, Level | Holders>;

/**
 * The records holding one key: the record itself while there is one (most keys of most indexes:
 * no Set to allocate per document), a Set once there are several.
 */
type Holders = StoredRecord | Set<StoredRecord>;

function withHolder(h: Holders | undefined, r: StoredRecord): Holders {
  if (h === undefined || h === r) return r;
  if (h instanceof Set) return h.add(r);
  return new Set([h, r]);
}

/** The holders left after removing `r`; undefined when none is left. */
function withoutHolder(h: Holders | undefined, r: StoredRecord): Holders | undefined {
  if (h === undefined || h === r) return undefined;
  if (!(h instanceof Set)) return h;
  h.delete(r);
  if (h.size === 0) return undefined;
  if (h.size === 1) return h.values().next().value as StoredRecord;
  return h;
}

/** The records of a holder entry. */
export function holders(h: Holders | undefined): Iterable<StoredRecord> {
  if (h === undefined) return [];
  return h instanceof Set ? h : [h];
}

/** Numeric bounds on one field (view numbers); either side may be open. */
export interface NumericRange {
  lo?: number;
  loInclusive?: boolean;
  hi?: number;
  hiInclusive?: boolean;
}

export interface IndexSpec {
  v: number;
  key: Doc;
  name: string;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Doc;
  expireAfterSeconds?: number;
}

/** One key a record contributes: keyOf of its value on each of the index's fields, in order. */
export type KeyParts = string[];

export class Index {
  readonly fields: string[];
  /** The top-level field each key field lies in. */
  private readonly topFields: string[];
  /** The keys, field by field (see the top of this file). */
  private readonly root: Level = new Map();
  /** Whether some record ever contributed several keys (arrays); never reset, so conservative. */
  private multikey = false;
  private readonly partial?: Matcher;
  /** Each key field's path, split at its dots (keys read from the bytes). */
  private readonly paths: string[][];
  /**
   * Set while the tree's build is deferred and not begun (`deferBuild`): the records it is to be
   * built from, the collection's own set. Until the build begins, adding and removing a record
   * changes nothing: the build reads the records as they are by then.
   */
  private unbuilt: Iterable<StoredRecord> | undefined;
  /**
   * Set while a deferred build is under way (`buildSome`): where it is in the records. A Set's
   * iterator is live (it visits what is added after it started and skips what is deleted before
   * it got there), and every change is applied to the tree meanwhile, so a record changed before
   * the build reaches it is simply added again there, with the keys it has then (adding is
   * idempotent).
   */
  private building: Iterator<StoredRecord> | undefined;
  constructor(
    readonly spec: IndexSpec,
    private readonly ns: string,
  ) {
    this.fields = Object.keys(spec.key);
    this.paths = this.fields.map((f) => f.split('.'));
    this.topFields = this.fields.map((f) => f.split('.')[0] as string);
    if (spec.partialFilterExpression)
      this.partial = compileFilter(toView(spec.partialFilterExpression) as Doc);
  }

  get name(): string {
    return this.spec.name;
  }

  /**
   * Leaves the tree to be built from `records` later (`buildSome`, or in one go when a lookup or a
   * scan first needs it) instead of record by record as they are added. Start-up does so for
   * non-unique indexes (Collection.restoreIndex says why). Only for an index nothing was added to
   * yet, and never for a unique one: its tree is what refuses a duplicate on every write.
   */
  deferBuild(records: Iterable<StoredRecord>): void {
    if (this.unique || this.root.size > 0) throw new Error(`index ${this.name} cannot be deferred`);
    this.unbuilt = records;
  }

  /** Whether the tree's build is deferred and not begun (`deferBuild`). */
  get deferred(): boolean {
    return this.unbuilt !== undefined;
  }

  /** Whether the tree's build is deferred and not complete (begun or not). */
  get pending(): boolean {
    return this.unbuilt !== undefined || this.building !== undefined;
  }

  /** Adds up to `limit` records to a deferred tree; true once the tree is complete. */
  buildSome(limit = Number.POSITIVE_INFINITY): boolean {
    if (this.unbuilt) {
      this.building = this.unbuilt[Symbol.iterator]();
      this.unbuilt = undefined;
    }
    const records = this.building;
    if (records === undefined) return true;
    const tops = new TopElements(this.topFields);
    for (let n = 0; n < limit; n++) {
      const next = records.next();
      if (next.done) {
        this.building = undefined;
        return true;
      }
      const record = next.value;
      this.add(record, this.keysOf(record, record.raw ? tops.read(record.raw) : undefined));
    }
    return false;
  }

  get unique(): boolean {
    return this.spec.unique === true || this.spec.name === '_id_';
  }

  /** Whether the index holds every document (sparse and partial ones leave some out). */
  get complete(): boolean {
    return !this.spec.sparse && !this.partial;
  }

  /**
   * Whether the index can find every document equal to non-null values on all its fields. A sparse
   * index can (a document with those values has the fields, so it is indexed); a partial one cannot
   * unless the query implied its filter, which is not analysed here.
   */
  get servesEquality(): boolean {
    return !this.partial;
  }

  /** Whether a change to these top-level fields may change the keys a record contributes. */
  readsAny(topLevelFields: ReadonlySet<string>): boolean {
    if (this.partial) return true;
    return this.topFields.some((f) => topLevelFields.has(f));
  }

  /** The top-level fields the index's key fields lie in (TopElements reads them for keysOf). */
  get topLevelFields(): readonly string[] {
    return this.topFields;
  }

  /**
   * The keys a record contributes, or none when a sparse or partial index leaves it out. `tops`:
   * its bytes already read (TopElements.read) for all of the collection's indexes at once.
   */
  keysOf(source: KeySource, tops?: TopElements): KeyParts[] {
    if (!this.partial && source.raw) {
      // Fields holding no array (the common case): one key, read from the bytes.
      const parts = new Array<string>(this.fields.length);
      let plain = true;
      let missing = 0;
      for (let i = 0; i < this.paths.length; i++) {
        const path = this.paths[i] as string[];
        const k = tops ? tops.keyAtPath(path) : keyAtPath(source.raw, path);
        if (k === undefined) {
          plain = false;
          break;
        }
        if (k === null) missing++;
        parts[i] = k ?? 'z';
      }
      if (plain) return this.spec.sparse && missing === parts.length ? [] : [parts];
    }
    return this.viewKeys(source.view).map((k) => k.parts);
  }

  /** The keys of a view, with the values they are made of (for E11000's message). */
  private viewKeys(view: Doc): { parts: KeyParts; values: unknown[] }[] {
    if (this.partial && !this.partial(view)) return [];
    const perField = this.fields.map((f) => valuesAtPath(view, f));
    if (this.spec.sparse && perField.every((vals) => vals.every((v) => v === undefined))) return [];
    const multi = perField.filter((vals) => vals.length > 1);
    if (multi.length > 1) {
      throw new MongoServerError(
        'CannotIndexParallelArrays',
        `cannot index parallel arrays [${this.fields.filter((_f, i) => (perField[i] as unknown[]).length > 1).join('] [')}]`,
      );
    }
    const out = new Map<string, { parts: KeyParts; values: unknown[] }>();
    let combos: unknown[][] = [[]];
    for (const vals of perField) {
      const next: unknown[][] = [];
      for (const c of combos) for (const v of vals) next.push([...c, v === undefined ? null : v]);
      combos = next;
    }
    for (const values of combos) {
      const parts = values.map(keyOf);
      const key = parts.join('\u0000');
      if (!out.has(key)) out.set(key, { parts, values });
    }
    return [...out.values()];
  }

  /**
   * Throws if `source` cannot be indexed: E11000 when it would duplicate a key another record
   * holds, or CannotIndexParallelArrays. Called for every index before a write changes anything.
   */
  checkUnique(source: KeySource, self?: StoredRecord, keys = this.keysOf(source)): KeyParts[] {
    if (!this.unique) return keys;
    for (const parts of keys) {
      for (const r of holders(this.holdersAt(parts))) {
        if (r !== self) throw this.duplicateError(this.valuesOf(source.view, parts));
      }
    }
    return keys;
  }

  /** The values a key of `view` is made of. */
  private valuesOf(view: Doc, parts: KeyParts): unknown[] {
    const key = parts.join('\u0000');
    const found = this.viewKeys(view).find((k) => k.parts.join('\u0000') === key);
    return found ? found.values : parts.map(() => null);
  }

  duplicateError(values: unknown[]): MongoServerError {
    const keyValue: Doc = {};
    this.fields.forEach((f, i) => (keyValue[f] = values[i] ?? null));
    const shown = this.fields.map((f, i) => `${f}: ${formatValue(values[i])}`).join(', ');
    return new MongoServerError(
      'DuplicateKey',
      `E11000 duplicate key error collection: ${this.ns} index: ${this.name} dup key: { ${shown} }`,
      { keyPattern: { ...this.spec.key }, keyValue },
    );
  }

  private holdersAt(parts: KeyParts): Holders | undefined {
    this.buildSome();
    let level: Level = this.root;
    const last = parts.length - 1;
    for (let i = 0; i < last; i++) {
      const next = level.get(parts[i] as string);
      if (next === undefined) return undefined;
      level = next as Level;
    }
    return level.get(parts[last] as string) as Holders | undefined;
  }

  /**
   * Indexes a record; `keys` when checkUnique already computed them for its current bytes.
   * `unchecked`: checkUnique was not called (start-up: a snapshot or journal holds only documents
   * that were unique when written); a unique index then still refuses a second record with the
   * same key here, so a damaged data folder fails start-up instead of holding duplicates.
   */
  add(record: StoredRecord, keys?: KeyParts[], unchecked = false): void {
    if (this.unbuilt) return;
    keys ??= this.keysOf(record);
    if (keys.length > 1) this.multikey = true;
    const last = this.fields.length - 1;
    for (const parts of keys) {
      let level: Level = this.root;
      for (let i = 0; i < last; i++) {
        const k = parts[i] as string;
        let next = level.get(k) as Level | undefined;
        if (next === undefined) level.set(k, (next = new Map()));
        level = next;
      }
      const k = parts[last] as string;
      const held = level.get(k) as Holders | undefined;
      if (unchecked && held !== undefined && held !== record && this.unique) {
        throw this.duplicateError(this.valuesOf(record.view, parts));
      }
      level.set(k, withHolder(held, record));
    }
  }

  /** Unindexes a record; `keys`: the keys it was added with (by default, of its current bytes). */
  remove(record: StoredRecord, keys?: KeyParts[]): void {
    if (this.unbuilt) return;
    for (const parts of keys ?? this.keysOf(record)) removeFromLevel(this.root, parts, 0, record);
  }

  /**
   * The records whose key starts with one of `prefixes` (values of the leading fields) and, when
   * `range` is given, whose next field is a number within it. A superset of the matches is enough:
   * callers still match every candidate against the whole filter. On a multikey index only one
   * bound is used, since different elements of an array may satisfy the two bounds.
   */
  scan(prefixes: unknown[][], range?: NumericRange): StoredRecord[] {
    this.buildSome();
    let bounds = range;
    if (range && this.multikey && range.lo !== undefined && range.hi !== undefined) {
      bounds = { lo: range.lo, loInclusive: range.loInclusive };
    }
    const seen = new Set<StoredRecord>();
    const collect = (node: Level | Holders): void => {
      if (node instanceof Map) for (const child of node.values()) collect(child);
      else if (node instanceof Set) for (const r of node) seen.add(r);
      else seen.add(node);
    };
    for (const prefix of prefixes) {
      let node: Level | Holders | undefined = this.root;
      for (const v of prefix) {
        node = (node as Level).get(keyOf(v));
        if (node === undefined) break;
      }
      if (node === undefined) continue;
      if (!bounds) {
        collect(node);
        continue;
      }
      if (!(node instanceof Map)) continue;
      for (const [k, child] of node) if (inRange(k, bounds)) collect(child);
    }
    // Natural order, as a collection scan would give (cheap: keys are mostly in that order).
    return [...seen].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  }

  lookup(values: unknown[]): Iterable<StoredRecord> {
    return holders(this.holdersAt(values.map(keyOf)));
  }

  /** The records holding a key given as its parts (keyOf of each field's value). */
  lookupKey(parts: KeyParts): Iterable<StoredRecord> {
    return holders(this.holdersAt(parts));
  }
}

function removeFromLevel(level: Level, parts: KeyParts, i: number, record: StoredRecord): void {
  const k = parts[i] as string;
  const child = level.get(k);
  if (child === undefined) return;
  if (i === parts.length - 1) {
    const left = withoutHolder(child as Holders, record);
    if (left === undefined) level.delete(k);
    else if (left !== child) level.set(k, left);
    return;
  }
  removeFromLevel(child as Level, parts, i + 1, record);
  if ((child as Level).size === 0) level.delete(k);
}

/**
 * Whether an index key (keyOf of a value) lies within numeric bounds. Type bracketing: only numbers
 * (keys `n<number>`, which parse back to the number exactly) are in a numeric range (MongoDB's
 * $gt/$lt with a number operand match numbers only). NaN is kept as a candidate either way; the
 * filter decides.
 */
function inRange(key: string, r: NumericRange): boolean {
  if (key.charCodeAt(0) !== 0x6e) return false;
  const v = Number(key.slice(1));
  if (Number.isNaN(v)) return true;
  if (r.lo !== undefined && (r.loInclusive ? v < r.lo : v <= r.lo)) return false;
  if (r.hi !== undefined && (r.hiInclusive ? v > r.hi : v >= r.hi)) return false;
  return true;
}
