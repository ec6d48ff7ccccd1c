// Read paths shared by find, count, distinct, delete, update and findAndModify: choose candidates
// through an index when the filter allows, match and order them with mingo, and give documents back
// in their stored BSON types.
import type { Collection, StoredRecord } from './collection';
import { emptySource, type DocSource } from './cursors';
import { Stored } from './indexes';
import { compileFilterOn, project, select, type FieldOf } from './engine';
import { MongoServerError } from './errors';
import { compileFastProjection, FALLBACK } from './projection';
import { compileRawProjection, RawBson, topValue } from './raw';
import { followKeyOrder, isPlainObject, retype, toView, type Doc } from './values';

export interface ReadSpec {
  sort?: Doc;
  skip?: number;
  limit?: number;
  variables?: Doc;
  /** -1: candidates in reverse natural order (hint `{$natural: -1}`). */
  natural?: 1 | -1;
}

export function validateSort(sort: Doc | undefined): Doc | undefined {
  if (!sort) return undefined;
  const out: Doc = {};
  for (const [k, v] of Object.entries(sort)) {
    const n = toView(v);
    if (n !== 1 && n !== -1) {
      if (isPlainObject(v) && '$meta' in v) {
        throw new MongoServerError(
          'BadValue',
          `$meta sort by '${String(v['$meta'])}' is not supported by this server`,
        );
      }
      throw new MongoServerError(
        'BadValue',
        '$sort key ordering must be 1 (for ascending) or -1 (for descending)',
      );
    }
    out[k] = n;
  }
  return out;
}

/** Matching records in result order. `filter` is the command's (typed) filter. */
export function findRecords(
  coll: Collection | undefined,
  filter: Doc,
  spec: ReadSpec = {},
): StoredRecord[] {
  const filterView = toView(filter) as Doc;
  const match = compileRecordFilter(filterView, spec.variables);
  if (!coll) return [];
  const candidates = coll.candidates(filterView);
  const list = Array.isArray(candidates) ? candidates : [...candidates];
  if (spec.natural === -1) list.reverse();
  return select(list, match, spec, viewOf, fieldOf);
}

/** Decodes the record's view (mingo's input): only where a fast path cannot decide. */
const viewOf = (r: StoredRecord): Doc => r.view;

/** A top-level field of a record, read from its bytes (raw.ts) without decoding the document. */
const fieldOf: FieldOf<StoredRecord> = (r, field) => {
  if (r.raw) return topValue(r.raw, field);
  const view = r.view;
  return Object.prototype.hasOwnProperty.call(view, field) ? view[field] : undefined;
};

/** A filter on stored records: fast paths read fields from the bytes, mingo gets the view. */
export function compileRecordFilter(
  filterView: Doc,
  variables?: Doc,
): (record: StoredRecord) => boolean {
  return compileFilterOn(filterView, variables, fieldOf, viewOf);
}

/** Applies a find projection and gives the result back its BSON types and stored field order. */
export function projectRecords(
  records: StoredRecord[],
  projection: Doc | undefined,
  variables?: Doc,
): Doc[] {
  const projector = compileProjection(projection, variables);
  return records.map(projector);
}

/**
 * A projector for one find projection: the fast path of projection.ts where it applies, mingo
 * otherwise (for the whole projection, or for single documents the fast path does not handle).
 */
export function compileProjection(projection: Doc | undefined, variables?: Doc): Projector {
  if (!projection || Object.keys(projection).length === 0)
    return Object.assign((r: StoredRecord) => r.doc, { subset: true });
  const view = toView(projection) as Doc;
  const slow = (r: StoredRecord): Doc => {
    const doc = r.doc;
    const [p] = project([toView(doc) as Doc], view, variables);
    return followKeyOrder(retype(p, doc), doc) as Doc;
  };
  const fast = compileFastProjection(view);
  if (!fast) {
    // Validate the projection once up front, so a bad one fails the find even with no results.
    project([], view, variables);
    return Object.assign(slow, { subset: false });
  }
  const projector = (r: StoredRecord): Doc => {
    const out = fast(r.doc);
    return out === FALLBACK ? slow(r) : out;
  };
  // Plain inclusion/exclusion keeps a subset of the document, so it is no larger than the document.
  return Object.assign(projector, { subset: true });
}

/** Projects one record; `subset` says whether results are never larger than the stored document. */
export type Projector = ((record: StoredRecord) => Doc) & { subset: boolean };

/**
 * The results of a find as a source for a cursor. Candidates are fixed when the find runs (a
 * snapshot: stored documents are never mutated), but without a sort they are matched and projected
 * only as batches are taken. With a sort every match is found first, and projected lazily.
 */
export function findSource(
  coll: Collection | undefined,
  filter: Doc,
  spec: ReadSpec,
  projection: Doc | undefined,
): DocSource {
  const filterView = toView(filter) as Doc;
  const match = compileRecordFilter(filterView, spec.variables);
  const projector = compileProjection(projection, spec.variables);
  if (!coll) return emptySource;
  // Plain top-level projections are made on the stored bytes (raw.ts); documents without a
  // projection are sent as their stored bytes by the reply encoder.
  const onBytes = compileRawProjection(projection && (toView(projection) as Doc));
  const whole = !projection || Object.keys(projection).length === 0;
  const emit = (r: StoredRecord, source: DocSource): Doc => {
    if (r.raw && (whole || onBytes)) {
      const bytes = onBytes ? onBytes(r.raw) : r.raw;
      source.bound = bytes.length;
      return new RawBson(bytes) as unknown as Doc;
    }
    source.bound = projector.subset ? r.size : undefined;
    return projector(r);
  };
  if (spec.sort && Object.keys(spec.sort).length) {
    // Snapshot of the records' current (immutable) documents, as below.
    const records = findRecords(coll, filter, spec).map(snapshotOf);
    let i = 0;
    const sorted: DocSource = () => {
      const r = records[i++];
      if (!r) return undefined;
      return emit(r, sorted);
    };
    return sorted;
  }
  // Snapshot: the (immutable) bytes each candidate has now.
  const snapshot: StoredRecord[] = [];
  for (const r of coll.candidates(filterView)) snapshot.push(snapshotOf(r));
  if (spec.natural === -1) snapshot.reverse();
  let skip = spec.skip ?? 0;
  let left = spec.limit ? spec.limit : Number.POSITIVE_INFINITY;
  let i = 0;
  const source: DocSource = () => {
    while (left > 0 && i < snapshot.length) {
      const r = snapshot[i++] as StoredRecord;
      if (!match(r)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      left--;
      return emit(r, source);
    }
    return undefined;
  };
  return source;
}

/**
 * A record as it is now (a collection replaces a record's bytes on update, never changes them in
 * place): what a cursor keeps, without decoding the document.
 */
function snapshotOf(r: StoredRecord): StoredRecord {
  return r.raw ? new Stored(r.raw) : { doc: r.doc, view: r.view, size: r.size };
}
