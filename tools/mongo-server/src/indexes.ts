// Secondary structures over a collection's records: every index (including _id_) is a Map from the
// canonical key of its fields to the records holding that key. Unique indexes reject a second record
// with the same key; all indexes serve equality lookups so that find by _id or a unique key does not
// scan the collection.
import { compileFilter, type Matcher } from './engine';
import { MongoServerError } from './errors';
import { formatValue, keyOf, toView, valuesAtPath, type Doc } from './values';

export interface StoredRecord {
  doc: Doc;
  view: Doc;
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

interface KeyEntry {
  key: string;
  values: unknown[];
}

export class Index {
  readonly fields: string[];
  readonly entries = new Map<string, Set<StoredRecord>>();
  private readonly partial?: Matcher;

  constructor(
    readonly spec: IndexSpec,
    private readonly ns: string,
  ) {
    this.fields = Object.keys(spec.key);
    if (spec.partialFilterExpression) this.partial = compileFilter(toView(spec.partialFilterExpression) as Doc);
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

  /** The keys a record contributes, or none when a sparse or partial index leaves it out. */
  keysOf(view: Doc): KeyEntry[] {
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
    const out = new Map<string, KeyEntry>();
    const combos: unknown[][] = [[]];
    for (const vals of perField) {
      const next: unknown[][] = [];
      for (const c of combos) for (const v of vals) next.push([...c, v === undefined ? null : v]);
      combos.splice(0, combos.length, ...next);
    }
    for (const values of combos) {
      const key = values.map(keyOf).join('\u0000');
      if (!out.has(key)) out.set(key, { key, values });
    }
    return [...out.values()];
  }

  /**
   * Throws if `view` cannot be indexed: E11000 when it would duplicate a key another record holds, or
   * CannotIndexParallelArrays. Called for every index before a write changes anything.
   */
  checkUnique(view: Doc, self?: StoredRecord): void {
    const keys = this.keysOf(view);
    if (!this.unique) return;
    for (const { key, values } of keys) {
      const holders = this.entries.get(key);
      if (holders && [...holders].some((r) => r !== self)) throw this.duplicateError(values);
    }
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

  add(record: StoredRecord): void {
    for (const { key } of this.keysOf(record.view)) {
      let set = this.entries.get(key);
      if (!set) this.entries.set(key, (set = new Set()));
      set.add(record);
    }
  }

  remove(record: StoredRecord, view = record.view): void {
    for (const { key } of this.keysOf(view)) {
      const set = this.entries.get(key);
      if (!set) continue;
      set.delete(record);
      if (set.size === 0) this.entries.delete(key);
    }
  }

  lookup(values: unknown[]): Set<StoredRecord> | undefined {
    return this.entries.get(values.map(keyOf).join('\u0000'));
  }
}
