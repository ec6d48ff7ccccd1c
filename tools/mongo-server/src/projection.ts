// A fast path for the commonest find projections: plain inclusion or exclusion of fields, dotted
// paths included (`{_id: 0, a: 1, 'b.c': 1}`, `{data: 0}`). It works on the stored (typed) document
// directly, so the result already has its BSON types and stored field order, and gives exactly what
// mingo's projection followed by retype/followKeyOrder gives (query.ts). Everything else ($slice,
// $elemMatch, positional `a.$`, expressions, `_id` sub-paths, colliding paths) goes to mingo, and so
// does any single document where a dotted path meets an array or a value whose treatment this module
// does not reproduce (see FALLBACK).
import { isNumeric, isPlainObject, type Doc } from './values';

/** Path tree: `true` ends a projected path, a nested tree continues it. */
type Tree = Map<string, Tree | true>;

/** Returned for a document the fast path does not handle; the caller projects it with mingo. */
export const FALLBACK = Symbol('fallback');

export type FastProjection = (doc: Doc) => Doc | typeof FALLBACK;

/** A fast projector for a view-form projection, or undefined when the projection needs mingo. */
export function compileFastProjection(projection: Doc): FastProjection | undefined {
  const tree: Tree = new Map();
  let mode: 'include' | 'exclude' | undefined;
  let idSpec: boolean | undefined;
  for (const [path, raw] of Object.entries(projection)) {
    let include: boolean;
    if (raw === 1 || raw === true) include = true;
    else if (raw === 0 || raw === false) include = false;
    else return undefined;
    if (path === '_id') {
      idSpec = include;
      continue;
    }
    if (path === '' || path.includes('$') || path.startsWith('_id.')) return undefined;
    const parts = path.split('.');
    if (parts.some((p) => p === '')) return undefined;
    const wanted = include ? 'include' : 'exclude';
    if (mode && mode !== wanted) return undefined;
    mode = wanted;
    let node = tree;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      const existing = node.get(part);
      if (i === parts.length - 1) {
        if (existing !== undefined) return undefined; // a path collision: mingo reports it
        node.set(part, true);
      } else {
        if (existing === true) return undefined;
        let next = existing;
        if (!next) node.set(part, (next = new Map()));
        node = next;
      }
    }
  }
  if (mode === undefined) {
    // Only `_id`: {_id: 0} excludes it, {_id: 1} keeps only it.
    if (idSpec === undefined) return undefined;
    tree.set('_id', true);
    mode = idSpec ? 'include' : 'exclude';
  } else if (mode === 'include') {
    if (idSpec !== false) tree.set('_id', true);
  } else {
    if (idSpec === true) return undefined; // {a: 0, _id: 1}: rare, left to mingo
    if (idSpec === false) tree.set('_id', true);
  }
  return mode === 'include' ? (doc) => include(doc, tree) : (doc) => exclude(doc, tree);
}

/** A value that an inclusion path cannot descend into and that the projection leaves out. */
function isScalar(v: unknown): boolean {
  return v === null || v === undefined || typeof v !== 'object' || isNumeric(v);
}

function include(src: Doc, tree: Tree): Doc | typeof FALLBACK {
  const out: Doc = {};
  for (const k of Object.keys(src)) {
    const spec = tree.get(k);
    if (spec === undefined) continue;
    const v = src[k];
    if (spec === true) {
      out[k] = v;
      continue;
    }
    if (isPlainObject(v)) {
      const sub = include(v, spec);
      if (sub === FALLBACK) return FALLBACK;
      out[k] = sub;
    } else if (!isScalar(v)) return FALLBACK; // arrays, dates, ObjectIds, ...
  }
  return out;
}

function exclude(src: Doc, tree: Tree): Doc | typeof FALLBACK {
  const out: Doc = {};
  for (const k of Object.keys(src)) {
    const spec = tree.get(k);
    const v = src[k];
    if (spec === undefined) out[k] = v;
    else if (spec === true) continue;
    else if (isPlainObject(v)) {
      const sub = exclude(v, spec);
      if (sub === FALLBACK) return FALLBACK;
      out[k] = sub;
    } else return FALLBACK;
  }
  return out;
}
