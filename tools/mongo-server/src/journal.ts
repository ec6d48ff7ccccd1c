// The journal: every change to the store, appended as a small record to numbered segment files
// beside the data file (`<data file>.journal.<n>`), written durably (O_DSYNC) by one writer with
// group commit. See README.md ("Persistence") for the layout and the guarantees.
//
// A record is a frame: magic "NHJ1" (4 bytes), payload length (uint32 LE), CRC-32C of the length
// field and the payload (uint32 LE), then the payload: a BSON document saying what changed
// (`{op, db, c, ...}`), followed, for an insert or an update, by the stored document's own BSON bytes.
import { deserialize, serialize } from 'bson';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ChangeLog, Collection, StoredRecord } from './collection';
import { crc32c } from './crc32c';
import { readFrames, readFrom, syncDir, type FrameCheck } from './framed-file';
import type { IndexSpec } from './indexes';
import type { Store } from './store';
import { num, type Doc } from './values';
import { DESERIALIZE } from './wire';

const MAGIC = Buffer.from('NHJ1', 'latin1');
const HEADER = 12;
/** A document is at most 16 MiB; what describes it is small. Anything longer is not a record. */
const MAX_PAYLOAD = 64 * 1024 * 1024;

export function segmentName(base: string, n: number): string {
  return `${base}.journal.${String(n).padStart(6, '0')}`;
}

/** The segment numbers of the journal of `base` found in `dir`, ascending. */
export async function listSegments(dir: string, base: string): Promise<number[]> {
  const prefix = `${base}.journal.`;
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
    .map((n) => Number(n.slice(prefix.length)))
    .sort((a, b) => a - b);
}

/** One framed record: the frame header and the description in one buffer, then the document's bytes. */
function frame(meta: Uint8Array, doc?: Uint8Array): { bufs: Uint8Array[]; bytes: number } {
  const length = meta.length + (doc?.length ?? 0);
  const head = Buffer.allocUnsafe(HEADER + meta.length);
  MAGIC.copy(head, 0);
  head.writeUInt32LE(length, 4);
  head.set(meta, HEADER);
  let crc = crc32c(head, 4, 8);
  crc = crc32c(head, HEADER, head.length, crc);
  if (doc) crc = crc32c(doc, 0, doc.length, crc);
  head.writeUInt32LE(crc, 8);
  return doc
    ? { bufs: [head, doc], bytes: head.length + doc.length }
    : { bufs: [head], bytes: head.length };
}

const checkRecord: FrameCheck = (buf, at, available) => {
  if (available < HEADER)
    return available > 0 && !startsWithMagic(buf, at, available) ? 'bad' : 'more';
  if (!startsWithMagic(buf, at, HEADER)) return 'bad';
  const length = buf.readUInt32LE(at + 4);
  if (length < 5 || length > MAX_PAYLOAD) return 'bad';
  if (available < HEADER + length) return 'more';
  let crc = crc32c(buf, at + 4, at + 8);
  crc = crc32c(buf, at + HEADER, at + HEADER + length, crc);
  return crc === buf.readUInt32LE(at + 8) ? HEADER + length : 'bad';
};

function startsWithMagic(buf: Buffer, at: number, n: number): boolean {
  for (let i = 0; i < Math.min(n, 4); i++) if (buf[at + i] !== MAGIC[i]) return false;
  return true;
}

/** Turns each change the store reports into a record for the writer. */
export class JournalLog implements ChangeLog {
  private readonly docMeta = new WeakMap<Collection, { insert: Uint8Array; update: Uint8Array }>();

  constructor(private readonly writer: JournalWriter) {}

  private add(meta: Doc, doc?: Uint8Array): void {
    const { bufs, bytes } = frame(serialize(meta), doc);
    this.writer.append(bufs, bytes);
  }

  /** The descriptions of inserts and updates are the same for every document of a collection. */
  private metaOf(coll: Collection): { insert: Uint8Array; update: Uint8Array } {
    let m = this.docMeta.get(coll);
    if (!m) {
      m = {
        insert: serialize({ op: 'insert', db: coll.db, c: coll.name }),
        update: serialize({ op: 'update', db: coll.db, c: coll.name }),
      };
      this.docMeta.set(coll, m);
    }
    return m;
  }

  created(coll: Collection): void {
    this.add({ op: 'create', db: coll.db, c: coll.name, options: coll.options });
  }
  dropped(db: string, name: string): void {
    this.add({ op: 'drop', db, c: name });
  }
  droppedDatabase(db: string): void {
    this.add({ op: 'dropDatabase', db });
  }
  indexCreated(coll: Collection, spec: IndexSpec): void {
    this.add({ op: 'createIndex', db: coll.db, c: coll.name, spec });
  }
  indexDropped(coll: Collection, name: string): void {
    this.add({ op: 'dropIndex', db: coll.db, c: coll.name, name });
  }
  inserted(coll: Collection, record: StoredRecord): void {
    const { bufs, bytes } = frame(this.metaOf(coll).insert, rawOf(record));
    this.writer.append(bufs, bytes);
  }
  replaced(coll: Collection, record: StoredRecord): void {
    const { bufs, bytes } = frame(this.metaOf(coll).update, rawOf(record));
    this.writer.append(bufs, bytes);
  }
  removed(coll: Collection, record: StoredRecord): void {
    this.add({ op: 'delete', db: coll.db, c: coll.name, _id: record.doc['_id'] });
  }
}

/** A stored record's bytes (every write sets them; serialised here only if one did not). */
export function rawOf(record: StoredRecord): Uint8Array {
  return (record.raw ??= serialize(record.doc));
}

/** An index spec as it was created, from its stored form (numbers decoded as BSON wrappers). */
export function specFromStored(stored: Doc): IndexSpec {
  const spec = { ...stored } as unknown as IndexSpec;
  spec.v = num(stored['v']) ?? 2;
  if (stored['expireAfterSeconds'] !== undefined)
    spec.expireAfterSeconds = num(stored['expireAfterSeconds']);
  return spec;
}

/** Applies one record to the store (replay); throws when it does not fit the store's state. */
function apply(store: Store, payload: Buffer): void {
  const metaSize = payload.readInt32LE(0);
  if (metaSize < 5 || metaSize > payload.length) throw new Error('record description is damaged');
  const meta = deserialize(payload.subarray(0, metaSize), DESERIALIZE) as Doc;
  const db = String(meta['db']);
  const name = String(meta['c']);
  const coll = (): Collection => {
    const c = store.collection(db, name);
    if (!c) throw new Error(`${meta['op']} on ${db}.${name}, which does not exist`);
    return c;
  };
  // A view of the chunk read from the file, kept as such until Persistence.finishStartup copies
  // it. Not decoded: the collection reads index keys and `_id` from the bytes.
  const raw = (): Uint8Array => payload.subarray(metaSize);
  switch (meta['op']) {
    case 'create':
      if (store.collection(db, name)) throw new Error(`create of ${db}.${name}, which exists`);
      store.ensureCollection(db, name, (meta['options'] as Doc) ?? {});
      return;
    case 'drop':
      store.dropCollection(db, name);
      return;
    case 'dropDatabase':
      store.dropDatabase(db);
      return;
    case 'createIndex':
      coll().createIndex(specFromStored(meta['spec'] as Doc));
      return;
    case 'dropIndex':
      coll().dropIndex(String(meta['name']));
      return;
    case 'insert': {
      coll().load(raw());
      return;
    }
    case 'update': {
      const bytes = raw();
      const c = coll();
      const record = c.byIdOf(bytes);
      if (!record) throw new Error(`update of a document missing from ${db}.${name}`);
      c.replaceBytes(record, bytes, undefined, true);
      return;
    }
    case 'delete': {
      const c = coll();
      const record = c.byId(meta['_id']);
      if (!record) throw new Error(`delete of a document missing from ${db}.${name}`);
      c.remove(record);
      return;
    }
    default:
      throw new Error(`unknown record kind ${String(meta['op'])}`);
  }
}

export interface SegmentReplay {
  records: number;
  /** Bytes of good records (the segment's size once a damaged tail is cut off). */
  bytes: number;
  /** Bytes cut off a torn tail (last segment only). */
  truncated: number;
}

/**
 * Replays one segment into the store. A record that is damaged or cut short is the torn tail of a
 * crash mid-append when no good record follows it: in the last segment it is cut off (the file is
 * truncated there) and reported. Anywhere else, or with good records after it, it is an error that
 * names the file and offset.
 */
export async function replaySegment(
  file: string,
  store: Store,
  last: boolean,
): Promise<SegmentReplay> {
  let records = 0;
  const read = await readFrames(file, checkRecord, (f, offset) => {
    try {
      apply(store, f.subarray(HEADER));
    } catch (err) {
      throw new Error(
        `journal ${file}: record at offset ${offset} cannot be replayed: ${(err as Error).message}`,
      );
    }
    records++;
  });
  if (read.stop === 'eof') return { records, bytes: read.end, truncated: 0 };
  const damaged = read.stop === 'bad' ? 'a damaged record' : 'a record cut short';
  const next = last ? await nextGoodRecord(file, read.end) : undefined;
  if (!last || next !== undefined) {
    throw new Error(
      `journal ${file} has ${damaged} at offset ${read.end}` +
        (next !== undefined ? ` followed by good records (at offset ${next})` : '') +
        '; it is not the torn end of a crash mid-append, so the server will not guess. ' +
        'Restore the file, or truncate it at that offset to accept losing what follows.',
    );
  }
  const handle = await fs.open(file, 'r+');
  try {
    await handle.truncate(read.end);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { records, bytes: read.end, truncated: read.size - read.end };
}

/** The offset of the first good record after `from` (a damaged one), if any. */
async function nextGoodRecord(file: string, from: number): Promise<number | undefined> {
  const rest = await readFrom(file, from);
  for (let at = rest.indexOf(MAGIC, 1); at >= 0; at = rest.indexOf(MAGIC, at + 1)) {
    const r = checkRecord(rest, at, rest.length - at);
    if (typeof r === 'number') return from + at;
  }
  return undefined;
}

export interface JournalStats {
  /** Durable writes to journal segments (each as a write + fdatasync: the files are O_DSYNC). */
  fsyncs: number;
  /** Records appended since start. */
  records: number;
  /** Of those, the ones written and fsynced. */
  durableRecords: number;
  /** Bytes written to the journal since start. */
  bytesWritten: number;
  /** The segment appended to now. */
  segment: number;
}

interface Batch {
  segment: number;
  bufs: Uint8Array[];
  bytes: number;
}

interface Waiter {
  upTo: number;
  resolve(): void;
  reject(err: Error): void;
}

export interface JournalWriterOptions {
  dir: string;
  base: string;
  /** The segment to append to. */
  segment: number;
  /** Bytes of good records in each segment not yet covered by a snapshot (appends go after them). */
  sizes: Map<number, number>;
  logger: Logger;
  /** How soon records nobody waits for are written and fsynced (mongod's commitIntervalMs). */
  commitIntervalMs: number;
  /** Called after each successful write + fdatasync. */
  onFlushed?: () => void;
}

/**
 * Appends records in memory and writes them to the current segment: at once when someone waits for
 * them (`sync()`, a write with `j: true`), else within `commitIntervalMs`. Group commit: while one
 * write + fdatasync runs, new records accumulate and the next round writes them all with one
 * fdatasync. Segments are written strictly in order, each fsynced before the next gets a byte.
 */
export class JournalWriter {
  private batches: Batch[];
  private appended = 0;
  private durable = 0;
  private waiters: Waiter[] = [];
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private handle: fs.FileHandle | undefined;
  private handleSegment = -1;
  private position = 0;
  private closed = false;
  readonly sizes: Map<number, number>;
  readonly stats: JournalStats;

  constructor(private readonly opts: JournalWriterOptions) {
    this.batches = [{ segment: opts.segment, bufs: [], bytes: 0 }];
    this.sizes = opts.sizes;
    this.stats = {
      fsyncs: 0,
      records: 0,
      durableRecords: 0,
      bytesWritten: 0,
      segment: opts.segment,
    };
  }

  /** The segment new records go to. */
  get segment(): number {
    return (this.batches[this.batches.length - 1] as Batch).segment;
  }

  append(bufs: Uint8Array[], bytes: number): void {
    if (this.closed) throw new Error('the journal is closed');
    const batch = this.batches[this.batches.length - 1] as Batch;
    for (const b of bufs) batch.bufs.push(b);
    batch.bytes += bytes;
    this.appended++;
    this.stats.records++;
    if (!this.timer && !this.running) this.arm();
  }

  /** Records from now on go to a new segment; returns its number. */
  rotate(): number {
    const next = this.segment + 1;
    this.batches.push({ segment: next, bufs: [], bytes: 0 });
    this.stats.segment = next;
    return next;
  }

  /** Resolves once every record appended so far is written and fsynced. */
  sync(): Promise<void> {
    const upTo = this.appended;
    if (this.durable >= upTo) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ upTo, resolve, reject });
      this.kick();
    });
  }

  /** Writes what is pending, fsyncs, and closes the segment. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.sync();
    this.closed = true;
    await this.running;
    await this.handle?.close();
    this.handle = undefined;
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.opts.commitIntervalMs);
    this.timer.unref();
  }

  private kick(): void {
    if (this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.flushRounds().finally(() => {
      this.running = undefined;
      if (this.batches.some((b) => b.bytes > 0) && !this.closed) this.arm();
    });
  }

  /** One round, then more while someone waits for records the last round did not hold. */
  private async flushRounds(): Promise<void> {
    do {
      const batches = this.batches;
      const upTo = this.appended;
      this.batches = [{ segment: this.segment, bufs: [], bytes: 0 }];
      let done = 0;
      try {
        for (const batch of batches) {
          await this.write(batch);
          done++;
        }
      } catch (err) {
        // Kept for the next round, at the same position: a partial write is overwritten then.
        this.batches = [...batches.slice(done), ...this.batches];
        const error = err instanceof Error ? err : new Error(String(err));
        this.opts.logger.error(
          {
            err: error,
            journal: path.join(this.opts.dir, segmentName(this.opts.base, this.segment)),
          },
          'journal write failed; writes waiting for it get a writeConcernError, and it is retried',
        );
        for (const w of this.waiters.splice(0)) w.reject(error);
        return;
      }
      this.durable = upTo;
      this.stats.durableRecords = upTo;
      this.waiters = this.waiters.filter((w) => {
        if (w.upTo > upTo) return true;
        w.resolve();
        return false;
      });
      this.opts.onFlushed?.();
    } while (this.waiters.length > 0);
  }

  private async write(batch: Batch): Promise<void> {
    if (batch.bytes === 0) return;
    if (batch.segment !== this.handleSegment) {
      // The previous segment's last batch was fsynced when it was written.
      await this.handle?.close();
      this.handle = undefined;
      this.handleSegment = -1;
      const file = path.join(this.opts.dir, segmentName(this.opts.base, batch.segment));
      const created = !this.sizes.has(batch.segment);
      this.handle = await fs.open(file, constants.O_RDWR | constants.O_CREAT | constants.O_DSYNC);
      this.handleSegment = batch.segment;
      this.position = this.sizes.get(batch.segment) ?? 0;
      this.sizes.set(batch.segment, this.position);
      if (created) await syncDir(this.opts.dir);
    }
    const handle = this.handle as fs.FileHandle;
    // O_DSYNC: the write returns once the bytes are on the disk, in one trip to the thread pool
    // (a separate datasync() was a second trip, and each waits for a turn of the event loop).
    const { bytesWritten } = await handle.writev(batch.bufs, this.position);
    if (bytesWritten !== batch.bytes) {
      throw new Error(`short write to the journal (${bytesWritten} of ${batch.bytes} bytes)`);
    }
    this.stats.fsyncs++;
    this.stats.bytesWritten += batch.bytes;
    this.position += batch.bytes;
    this.sizes.set(batch.segment, this.position);
  }
}
