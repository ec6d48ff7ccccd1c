// Secondary structures over a collection's records: every index (including _id_) is a Map from the
// canonical key of its fields to the records holding that key. Unique indexes reject a second record
// with the same key; all indexes serve equality lookups so that find by _id or a unique key does not
// scan the collection.
import { compileFilter, type Matcher } from './engine';
import { MongoServerError } from './errors';
import { deserialize } from 'bson';
import { formatValue, keyOf, toView, valuesAtPath, type Doc } from './values';
import { DESERIALIZE } from './wire';

export interface StoredRecord {
  /** The document with its exact BSON types (a `Stored` record decodes it from `raw` on each read). */
  readonly doc: Doc;
  view: Doc;
  /** Insertion sequence (natural order); results gathered from several index keys follow it. */
  seq?: number;
  /** BSON size of `doc`, when known (an upper bound for what a plain projection returns). */
  size?: number;
  /** The BSON bytes of `doc` (raw.ts), set by every write. */
  raw?: Uint8Array;
}

/**
 * A stored document as a collection keeps it: its BSON bytes (the stored form, exact types: what
 * reads send and the journal writes) and its view (what mingo, filters and indexes read). The typed
 * document is decoded from the bytes whenever a caller asks for it (an update, a projection mingo
 * makes, an aggregation result): kept decoded beside the bytes and the view, with a wrapper object
 * per number, it took more memory than both together (README "Memory"). The bytes are always a
 * buffer of their own (`ownBytes`), never a view into a larger one that they would keep alive.
 */
export class Stored implements StoredRecord {
  constructor(
    public view: Doc,
    public raw: Uint8Array,
    public seq?: number,
  ) {}

  get doc(): Doc {
    return deserialize(this.raw, DESERIALIZE) as Doc;
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

/** One level of an index's key tree: the values of one field, each leading to the next field. */
interface TreeNode {
  children: Map<string, TreeChild>;
}

interface TreeChild {
  value: unknown;
  node?: TreeNode;
  records?: Holders;
}

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

export interface KeyEntry {
  key: string;
  values: unknown[];
  /** keyOf of each value, field by field (the tree's keys). */
  parts: string[];
}

export class Index {
  readonly fields: string[];
  /** The top-level field each key field lies in. */
  private readonly topFields: string[];
  readonly entries = new Map<string, Holders>();
  /** The same keys as a tree, field by field, for prefix and range scans. */
  private readonly tree: TreeNode = { children: new Map() };
  /** Whether some record ever contributed several keys (arrays); never reset, so conservative. */
  private multikey = false;
  private readonly partial?: Matcher;
  /** Whether every key field is a top-level field (keysOf's fast path). */
  private readonly plainFields: boolean;

  constructor(
    readonly spec: IndexSpec,
    private readonly ns: string,
  ) {
    this.fields = Object.keys(spec.key);
    this.plainFields = this.fields.every((f) => !f.includes('.') && f !== '__proto__');
    this.topFields = this.fields.map((f) => f.split('.')[0] as string);
    if (spec.partialFilterExpression)
      this.partial = compileFilter(toView(spec.partialFilterExpression) as Doc);
  }

  get name(): string {
    return this.spec.name;
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

  /** The keys a record contributes, or none when a sparse or partial index leaves it out. */
  keysOf(view: Doc): KeyEntry[] {
    if (this.partial && !this.partial(view)) return [];
    if (this.plainFields && !this.spec.sparse) {
      // Top-level fields holding no array (the common case): exactly one key.
      const values = new Array<unknown>(this.fields.length);
      const parts = new Array<string>(this.fields.length);
      let plain = true;
      for (let i = 0; i < this.fields.length; i++) {
        const v = view[this.fields[i] as string];
        if (Array.isArray(v)) {
          plain = false;
          break;
        }
        values[i] = v === undefined ? null : v;
        parts[i] = keyOf(values[i]);
      }
      if (plain) return [{ key: parts.join('\u0000'), values, parts }];
    }
    const perField = this.fields.map((f) => valuesAtPath(view, f));
    if (this.spec.sparse && perField.every((vals) => vals.every((v) => v === undefined))) return [];
    const multi = perField.filter((vals) => vals.length > 1);
    if (multi.length > 1) {
      throw new MongoServerError(
        'CannotIndexParallelArrays',
        `cannot index parallel arrays [${this.fields.filter((_f, i) => (perField[i] as unknown[]).length > 1).join('] [')}]`,
      );
    }
    const out = new Map<string, KeyEntry>();
    const combos: unknown[][] = [[]];
    for (const vals of perField) {
      const next: unknown[][] = [];
      for (const c of combos) for (const v of vals) next.push([...c, v === undefined ? null : v]);
      combos.splice(0, combos.length, ...next);
    }
    for (const values of combos) {
      const parts = values.map(keyOf);
      const key = parts.join('\u0000');
      if (!out.has(key)) out.set(key, { key, values, parts });
    }
    return [...out.values()];
  }

  /**
   * Throws if `view` cannot be indexed: E11000 when it would duplicate a key another record holds, or
   * CannotIndexParallelArrays. Called for every index before a write changes anything.
   */
  checkUnique(view: Doc, self?: StoredRecord, keys = this.keysOf(view)): KeyEntry[] {
    if (!this.unique) return keys;
    for (const { key, values } of keys) {
      for (const r of holders(this.entries.get(key))) {
        if (r !== self) throw this.duplicateError(values);
      }
    }
    return keys;
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

  /** Indexes a record; `keys` when checkUnique already computed them for its current view. */
  add(record: StoredRecord, keys = this.keysOf(record.view)): void {
    if (keys.length > 1) this.multikey = true;
    for (const { key, values, parts } of keys) {
      this.entries.set(key, withHolder(this.entries.get(key), record));
      let node = this.tree;
      for (let i = 0; i < values.length; i++) {
        const k = parts[i] as string;
        let child = node.children.get(k);
        if (!child) node.children.set(k, (child = { value: values[i] }));
        if (i === values.length - 1) child.records = withHolder(child.records, record);
        else node = child.node ??= { children: new Map() };
      }
    }
  }

  remove(record: StoredRecord, view = record.view): void {
    for (const { key, values } of this.keysOf(view)) {
      const left = withoutHolder(this.entries.get(key), record);
      if (left === undefined) this.entries.delete(key);
      else this.entries.set(key, left);
      removeFromTree(this.tree, values, 0, record);
    }
  }

  /**
   * The records whose key starts with one of `prefixes` (values of the leading fields) and, when
   * `range` is given, whose next field is a number within it. A superset of the matches is enough:
   * callers still match every candidate against the whole filter. On a multikey index only one
   * bound is used, since different elements of an array may satisfy the two bounds.
   */
  scan(prefixes: unknown[][], range?: NumericRange): StoredRecord[] {
    let bounds = range;
    if (range && this.multikey && range.lo !== undefined && range.hi !== undefined) {
      bounds = { lo: range.lo, loInclusive: range.loInclusive };
    }
    const leaves: Holders[] = [];
    const collect = (child: TreeChild): void => {
      if (child.records) leaves.push(child.records);
      if (child.node) for (const c of child.node.children.values()) collect(c);
    };
    for (const prefix of prefixes) {
      let node: TreeNode | undefined = this.tree;
      let last: TreeChild | undefined;
      for (const v of prefix) {
        last = node?.children.get(keyOf(v));
        node = last?.node;
        if (!last) break;
      }
      if (prefix.length > 0 && !last) continue;
      if (!bounds) {
        if (last) collect(last);
        continue;
      }
      if (!node) continue;
      for (const child of node.children.values()) {
        if (inRange(child.value, bounds)) collect(child);
      }
    }
    const seen = new Set<StoredRecord>();
    for (const leaf of leaves) {
      if (leaf instanceof Set) for (const r of leaf) seen.add(r);
      else seen.add(leaf);
    }
    // Natural order, as a collection scan would give (cheap: leaves are mostly in that order).
    return [...seen].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  }

  lookup(values: unknown[]): Iterable<StoredRecord> {
    return holders(this.entries.get(values.map(keyOf).join('\u0000')));
  }
}

function removeFromTree(node: TreeNode, values: unknown[], i: number, record: StoredRecord): void {
  const k = keyOf(values[i]);
  const child = node.children.get(k);
  if (!child) return;
  if (i === values.length - 1) child.records = withoutHolder(child.records, record);
  else if (child.node) {
    removeFromTree(child.node, values, i + 1, record);
    if (child.node.children.size === 0) child.node = undefined;
  }
  if (!child.records && !child.node) node.children.delete(k);
}

/**
 * Whether an index key value lies within numeric bounds. Type bracketing: only numbers are in a
 * numeric range (MongoDB's $gt/$lt with a number operand match numbers only). NaN is kept as a
 * candidate either way; the filter decides.
 */
function inRange(v: unknown, r: NumericRange): boolean {
  if (typeof v !== 'number') return false;
  if (Number.isNaN(v)) return true;
  if (r.lo !== undefined && (r.loInclusive ? v < r.lo : v <= r.lo)) return false;
  if (r.hi !== undefined && (r.hiInclusive ? v > r.hi : v >= r.hi)) return false;
  return true;
}
