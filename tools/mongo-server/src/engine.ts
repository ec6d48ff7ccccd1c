// The single place where mingo is called. Everything here works on view documents (see values.ts).
import { Aggregator, Query, ProcessingMode, updateOne } from 'mingo';
import type { Options } from 'mingo/types';
import { fromQueryEngineError, MongoServerError } from './errors';
import type { Doc } from './values';

type EngineOptions = Partial<Options>;

function options(
  extra: { variables?: Doc; resolve?: (name: string) => Doc[] } = {},
): EngineOptions {
  return {
    idKey: '_id',
    // Server-side JavaScript ($where, $function, $accumulator) is disabled, as on a hardened mongod.
    scriptEnabled: false,
    useStrictMode: true,
    failOnError: true,
    processingMode: ProcessingMode.CLONE_OFF,
    ...(extra.variables ? { variables: extra.variables } : {}),
    ...(extra.resolve ? { collectionResolver: extra.resolve } : {}),
  };
}

export type Matcher = (doc: Doc) => boolean;

export function compileFilter(filter: Doc, variables?: Doc): Matcher {
  if (Object.keys(filter).length === 0) return () => true;
  const simple = simpleEqualities(filter);
  if (simple) {
    // Plain scalar values are decided here; arrays (and anything unusual) still go to mingo, whose
    // Query is only built when a document needs it (it cannot fail to parse such a filter).
    let q: Query | undefined;
    const slow = (doc: Doc): boolean => {
      try {
        return (q ??= new Query(filter, options({ variables }))).test(doc);
      } catch (err) {
        throw fromQueryEngineError(err, 'query');
      }
    };
    return (doc) => {
      let undecided = false;
      for (const [field, value] of simple) {
        const v = doc[field];
        if (typeof v === typeof value) {
          if (v !== value) return false;
        } else if (v === undefined || v === null || typeof v !== 'object') return false;
        else undecided = true;
      }
      return undecided ? slow(doc) : true;
    };
  }
  try {
    const q = new Query(filter, options({ variables }));
    return (doc) => {
      try {
        return q.test(doc);
      } catch (err) {
        throw fromQueryEngineError(err, 'query');
      }
    };
  } catch (err) {
    throw fromQueryEngineError(err, 'query');
  }
}

/**
 * `{field: <string | boolean | finite number>, ...}` on top-level fields: a stored value of the same
 * JS type matches exactly when it is equal (view numbers compare by value across BSON types), and a
 * missing, null or other scalar value never matches.
 */
function simpleEqualities(filter: Doc): [string, string | boolean | number][] | undefined {
  const out: [string, string | boolean | number][] = [];
  for (const field of Object.keys(filter)) {
    const value = filter[field];
    if (field.startsWith('$') || field.includes('.') || field === '') return undefined;
    if (typeof value === 'string' || typeof value === 'boolean') out.push([field, value]);
    else if (typeof value === 'number' && Number.isFinite(value)) out.push([field, value]);
    else return undefined;
  }
  return out;
}

export interface FindSpec {
  sort?: Doc;
  skip?: number;
  limit?: number;
}

/** Filters, sorts, skips and limits view documents; returns the same objects (no copies). */
export function select(docs: Doc[], match: Matcher, spec: FindSpec): Doc[] {
  let out = docs.filter(match);
  if (spec.sort && Object.keys(spec.sort).length) {
    try {
      const sorted = new Query({}, options())
        .find(out)
        .sort(spec.sort as Record<string, 1 | -1>)
        .all() as Doc[];
      out = sorted;
    } catch (err) {
      throw fromQueryEngineError(err, 'query');
    }
  }
  const skip = spec.skip ?? 0;
  const limit = spec.limit ?? 0;
  if (skip || limit) out = out.slice(skip, limit ? skip + limit : undefined);
  return out;
}

export function project(docs: Doc[], projection: Doc, variables?: Doc): Doc[] {
  try {
    return new Query({}, options({ variables })).find(docs, projection).all() as Doc[];
  } catch (err) {
    throw fromQueryEngineError(err, 'projection');
  }
}

export function aggregate(
  docs: Doc[],
  pipeline: Doc[],
  resolve: (name: string) => Doc[],
  variables?: Doc,
): Doc[] {
  try {
    return new Aggregator(pipeline, options({ resolve, variables })).run(docs) as Doc[];
  } catch (err) {
    throw fromQueryEngineError(err, 'pipeline');
  }
}

/**
 * Applies an update (operator document or pipeline) to one view document in place of a copy and
 * returns the new view. `condition` is the query, needed by the positional `$` operator.
 */
export function applyUpdate(
  view: Doc,
  modifier: Doc | Doc[],
  condition: Doc,
  arrayFilters: Doc[] | undefined,
  variables?: Doc,
): Doc {
  const docs = [view];
  try {
    updateOne(
      docs,
      condition,
      modifier as never,
      {
        cloneMode: 'deep',
        ...(arrayFilters ? { arrayFilters } : {}),
        ...(variables ? { let: variables } : {}),
      },
      options(),
    );
  } catch (err) {
    if (err instanceof MongoServerError) throw err;
    throw fromQueryEngineError(err, 'update');
  }
  return docs[0] as Doc;
}
