// Server-side cursors: results are computed when the cursor opens (documents are immutable once
// stored, so holding references is a consistent snapshot) and handed out in batches by getMore.
import { calculateObjectSize, Long } from 'bson';
import { randomBytes } from 'node:crypto';
import type { Doc } from './values';

/** The first batch of find/aggregate holds 101 documents unless batchSize says otherwise (MongoDB default). */
export const DEFAULT_FIRST_BATCH = 101;
/** A reply's documents stay under 16 MiB, as mongod's batches do. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 16 * 1024;
/** mongod closes cursors idle for 10 minutes (cursorTimeoutMillis). */
export const CURSOR_TIMEOUT_MS = 10 * 60 * 1000;

export interface ServerCursor {
  id: Long;
  ns: string;
  docs: Doc[];
  position: number;
  lastUsed: number;
}

export class CursorRegistry {
  private readonly cursors = new Map<string, ServerCursor>();

  /** Cuts the first batch; registers a cursor only when documents remain. */
  open(ns: string, docs: Doc[], batchSize: number | undefined, singleBatch: boolean): { batch: Doc[]; id: Long } {
    const size = batchSize ?? DEFAULT_FIRST_BATCH;
    const batch = size === 0 ? [] : takeBatch(docs, 0, size);
    if (singleBatch || batch.length >= docs.length) return { batch, id: Long.ZERO };
    const id = newCursorId(this.cursors);
    this.cursors.set(id.toString(), { id, ns, docs, position: batch.length, lastUsed: Date.now() });
    return { batch, id };
  }

  get(id: Long): ServerCursor | undefined {
    return this.cursors.get(id.toString());
  }

  next(cursor: ServerCursor, batchSize: number | undefined): { batch: Doc[]; id: Long } {
    const batch = takeBatch(cursor.docs, cursor.position, batchSize ?? 0);
    cursor.position += batch.length;
    cursor.lastUsed = Date.now();
    if (cursor.position >= cursor.docs.length) {
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
    for (const [key, c] of this.cursors) if (now - c.lastUsed > CURSOR_TIMEOUT_MS) this.cursors.delete(key);
  }

  clear(): void {
    this.cursors.clear();
  }

  get size(): number {
    return this.cursors.size;
  }
}

/** batchSize 0 on getMore means "as many as fit"; on find it means an empty first batch. */
function takeBatch(docs: Doc[], from: number, batchSize: number): Doc[] {
  const max = batchSize > 0 ? batchSize : Number.POSITIVE_INFINITY;
  const out: Doc[] = [];
  let bytes = 0;
  for (let i = from; i < docs.length && out.length < max; i++) {
    const doc = docs[i] as Doc;
    bytes += calculateObjectSize(doc);
    if (out.length > 0 && bytes > MAX_BATCH_BYTES) break;
    out.push(doc);
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
