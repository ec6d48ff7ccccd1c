// Server-side cursors. A cursor reads from a source that yields result documents one at a time: a
// find computes its candidate list when it opens (stored documents are immutable, so holding
// references is a consistent snapshot) but filters and projects only what each batch needs.
import { calculateObjectSize, Long } from 'bson';
import { randomBytes } from 'node:crypto';
import type { Doc } from './values';

/** The first batch of find/aggregate holds 101 documents unless batchSize says otherwise (MongoDB default). */
export const DEFAULT_FIRST_BATCH = 101;
/** A reply's documents stay under 16 MiB, as mongod's batches do. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 16 * 1024;
/** mongod closes cursors idle for 10 minutes (cursorTimeoutMillis). */
export const CURSOR_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * Yields result documents in order; undefined once exhausted. A source may set `bound` to an upper
 * bound of the BSON size of the document it just returned (or undefined when it does not know), so
 * batches need not measure every document.
 */
export interface DocSource {
  (): Doc | undefined;
  bound?: number;
}

export function arraySource(docs: Doc[]): DocSource {
  let i = 0;
  return () => (i < docs.length ? docs[i++] : undefined);
}

/** A source that is already exhausted. */
export const emptySource: DocSource = () => undefined;

export interface ServerCursor {
  id: Long;
  ns: string;
  /** The next document, already taken from the source (undefined when the source is exhausted). */
  pending: Doc | undefined;
  pendingBound: number | undefined;
  source: DocSource;
  lastUsed: number;
  /** Opened with noCursorTimeout: never reaped for being idle. */
  noTimeout: boolean;
}

export class CursorRegistry {
  private readonly cursors = new Map<string, ServerCursor>();

  /** Cuts the first batch; registers a cursor only when documents remain. */
  open(
    ns: string,
    docs: Doc[] | DocSource,
    batchSize: number | undefined,
    singleBatch: boolean,
    noTimeout = false,
  ): { batch: Doc[]; id: Long } {
    const source = Array.isArray(docs) ? arraySource(docs) : docs;
    const size = batchSize ?? DEFAULT_FIRST_BATCH;
    const pending = source();
    const state = { pending, pendingBound: source.bound, source };
    const batch = size === 0 ? [] : takeBatch(state, size);
    if (singleBatch || state.pending === undefined) return { batch, id: Long.ZERO };
    const id = newCursorId(this.cursors);
    this.cursors.set(id.toString(), { id, ns, ...state, lastUsed: Date.now(), noTimeout });
    return { batch, id };
  }

  get(id: Long): ServerCursor | undefined {
    return this.cursors.get(id.toString());
  }

  next(cursor: ServerCursor, batchSize: number | undefined): { batch: Doc[]; id: Long } {
    const batch = takeBatch(cursor, batchSize ?? 0);
    cursor.lastUsed = Date.now();
    if (cursor.pending === undefined) {
      this.cursors.delete(cursor.id.toString());
      return { batch, id: Long.ZERO };
    }
    return { batch, id: cursor.id };
  }

  kill(id: Long): boolean {
    return this.cursors.delete(id.toString());
  }

  /** Drops cursors over a dropped namespace or database. */
  killNamespace(match: (ns: string) => boolean): void {
    for (const [key, c] of this.cursors) if (match(c.ns)) this.cursors.delete(key);
  }

  reapIdle(now = Date.now()): void {
    for (const [key, c] of this.cursors)
      if (!c.noTimeout && now - c.lastUsed > CURSOR_TIMEOUT_MS) this.cursors.delete(key);
  }

  clear(): void {
    this.cursors.clear();
  }

  get size(): number {
    return this.cursors.size;
  }
}

/** batchSize 0 on getMore means "as many as fit"; on find it means an empty first batch. */
interface BatchState {
  pending: Doc | undefined;
  pendingBound: number | undefined;
  source: DocSource;
}

function takeBatch(state: BatchState, batchSize: number): Doc[] {
  const max = batchSize > 0 ? batchSize : Number.POSITIVE_INFINITY;
  const out: Doc[] = [];
  let bytes = 0;
  while (state.pending !== undefined && out.length < max) {
    const doc = state.pending;
    const bound = state.pendingBound;
    // A known upper bound is counted as is while it fits; near the limit the exact size decides.
    bytes +=
      bound !== undefined && bytes + bound <= MAX_BATCH_BYTES ? bound : calculateObjectSize(doc);
    if (out.length > 0 && bytes > MAX_BATCH_BYTES) break;
    out.push(doc);
    state.pending = state.source();
    state.pendingBound = state.source.bound;
  }
  return out;
}

function newCursorId(existing: Map<string, ServerCursor>): Long {
  for (;;) {
    const bytes = randomBytes(8);
    bytes[7] = (bytes[7] as number) & 0x7f; // positive int64, as mongod's cursor ids are
    const id = Long.fromBytesLE([...bytes]);
    if (!id.isZero() && !existing.has(id.toString())) return id;
  }
}
