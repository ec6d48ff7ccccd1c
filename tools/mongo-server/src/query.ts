// Read paths shared by find, count, distinct, delete, update and findAndModify: choose candidates
// through an index when the filter allows, match and order them with mingo, and give documents back
// in their stored BSON types.
import type { Collection, StoredRecord } from './collection';
import { compileFilter, project, select } from './engine';
import { MongoServerError } from './errors';
import { followKeyOrder, isPlainObject, retype, toView, type Doc } from './values';

export interface ReadSpec {
  sort?: Doc;
  skip?: number;
  limit?: number;
  variables?: Doc;
}

export function validateSort(sort: Doc | undefined): Doc | undefined {
  if (!sort) return undefined;
  const out: Doc = {};
  for (const [k, v] of Object.entries(sort)) {
    const n = toView(v);
    if (n !== 1 && n !== -1) {
      if (isPlainObject(v) && '$meta' in v) {
        throw new MongoServerError('BadValue', `$meta sort by '${String(v['$meta'])}' is not supported by this server`);
      }
      throw new MongoServerError('BadValue', '$sort key ordering must be 1 (for ascending) or -1 (for descending)');
    }
    out[k] = n;
  }
  return out;
}

/** Matching records in result order. `filter` is the command's (typed) filter. */
export function findRecords(coll: Collection | undefined, filter: Doc, spec: ReadSpec = {}): StoredRecord[] {
  const filterView = toView(filter) as Doc;
  const match = compileFilter(filterView, spec.variables);
  if (!coll) return [];
  const byView = new Map<Doc, StoredRecord>();
  const views: Doc[] = [];
  for (const r of coll.candidates(filterView)) {
    byView.set(r.view, r);
    views.push(r.view);
  }
  const selected = select(views, match, spec);
  return selected.map((v) => byView.get(v) as StoredRecord);
}

/** Applies a find projection and gives the result back its BSON types and stored field order. */
export function projectRecords(records: StoredRecord[], projection: Doc | undefined, variables?: Doc): Doc[] {
  if (!projection || Object.keys(projection).length === 0) return records.map((r) => r.doc);
  const projected = project(
    records.map((r) => r.view),
    toView(projection) as Doc,
    variables,
  );
  return projected.map((p, i) => {
    const typed = (records[i] as StoredRecord).doc;
    return followKeyOrder(retype(p, typed), typed) as Doc;
  });
}
