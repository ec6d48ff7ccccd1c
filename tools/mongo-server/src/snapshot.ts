// The data file: a snapshot of the store as a sequence of BSON documents, so that every BSON type
// round-trips and no single BSON document has to hold a whole database:
//
//   header      {format: 'nhp-mongo-server-snapshot', version: 2, writtenAt, journal: <segment>}
//   per collection: {db, collection, options, indexes, count}, then its `count` documents
//   end         {end: true, collections, documents}             (version 2 only)
//
// `journal` is the first journal segment the snapshot does not cover: replay starts there. Version 1
// (written before the journal existed) has neither `journal` nor the end document; it covers no
// segment. Snapshots are written by compaction (persistence.ts) from references captured at one
// instant: temp file in the same directory, fsync, rename over the data file, fsync the directory.
import { deserialize, serialize } from 'bson';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import type { IndexSpec } from './indexes';
import { specFromStored } from './journal';
import { readFrames, syncDir, type FrameCheck } from './framed-file';
import type { Store } from './store';
import { num, type Doc } from './values';
import { DESERIALIZE } from './wire';

const FORMAT = 'nhp-mongo-server-snapshot';
const VERSION = 2;

export interface LoadedSnapshot {
  version: number;
  /** The first journal segment to replay. */
  journalFrom: number;
  bytes: number;
  collections: number;
  documents: number;
}

const checkBson: FrameCheck = (buf, at, available) => {
  if (available < 4) return 'more';
  const size = buf.readInt32LE(at);
  if (size < 5) return 'bad';
  return available < size ? 'more' : size;
};

/** Loads the data file into an empty store; undefined when there is none (or it is empty). */
export async function loadSnapshot(
  file: string,
  store: Store,
): Promise<LoadedSnapshot | undefined> {
  let header: Doc | undefined;
  let ended = false;
  let remaining = 0;
  let coll: ReturnType<Store['ensureCollection']> | undefined;
  let collections = 0;
  let documents = 0;
  let read;
  try {
    read = await readFrames(file, checkBson, (frame, offset) => {
      const fail = (why: string): never => {
        throw new Error(`data file ${file}: ${why} at offset ${offset}`);
      };
      if (ended) fail('data after the end of the snapshot');
      if (!header) {
        header = deserialize(frame, DESERIALIZE) as Doc;
        if (header['format'] !== FORMAT) fail('not a mongo-server data file');
        const v = num(header['version']);
        if (v !== 1 && v !== VERSION) fail(`unknown data file version ${String(v)}`);
        return;
      }
      if (remaining > 0 && coll) {
        // `frame` is a view of the chunk read from the file, kept as such until
        // Persistence.finishStartup copies each document into a buffer of its own (README
        // "Memory": kept as a view, it held the whole 8 MiB chunk until every document read from
        // it was replaced). Nothing is decoded: index keys are read from the bytes.
        coll.load(frame);
        remaining--;
        documents++;
        return;
      }
      const meta = deserialize(frame, DESERIALIZE) as Doc;
      if (meta['end'] === true) {
        ended = true;
        return;
      }
      coll = store.ensureCollection(
        String(meta['db']),
        String(meta['collection']),
        (meta['options'] as Doc) ?? {},
      );
      for (const spec of (meta['indexes'] as Doc[]) ?? []) coll.restoreIndex(specFromStored(spec));
      // Its documents are kept as read until first needed (Collection.deferLoad says why).
      coll.deferLoad();
      remaining = num(meta['count']) ?? 0;
      collections++;
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (!header) {
    if (read.size === 0) return undefined;
    throw new Error(`data file ${file} is truncated (no complete header)`);
  }
  const version = num(header['version']) as number;
  if (read.stop !== 'eof' || remaining > 0 || (version >= 2 && !ended)) {
    throw new Error(`data file ${file} is truncated or damaged at offset ${read.end}`);
  }
  return {
    version,
    journalFrom: version >= 2 ? (num(header['journal']) ?? 1) : 1,
    bytes: read.size,
    collections,
    documents,
  };
}

/** What a snapshot writes: collection metadata and each record's bytes, at one instant. */
export interface StoreCapture {
  collections: Array<{
    db: string;
    name: string;
    options: Doc;
    indexes: IndexSpec[];
    raws: Uint8Array[];
  }>;
  documents: number;
}

/**
 * Takes the references a snapshot needs, synchronously. Records are replaced (record.raw gets new
 * bytes on update) but bytes are never changed in place, so these stay the state of this instant
 * while the snapshot is written out asynchronously.
 */
export function captureStore(store: Store): StoreCapture {
  const collections: StoreCapture['collections'] = [];
  let documents = 0;
  for (const [db, colls] of store.databases) {
    for (const coll of colls.values()) {
      const raws = coll.rawsToSnapshot();
      documents += raws.length;
      collections.push({
        db,
        name: coll.name,
        options: coll.options,
        indexes: coll.indexSpecs().filter((x) => x.name !== '_id_'),
        raws,
      });
    }
  }
  return { collections, documents };
}

/** Points of compaction where a test may stop the server (a crash at each must recover exactly). */
export type CompactionPoint = 'writing' | 'written' | 'renamed';

export class CompactionCancelled extends Error {
  constructor() {
    super('compaction cancelled (the server is stopping)');
  }
}

export interface WriteSnapshotOptions {
  /** The first journal segment the snapshot does not cover. */
  journalFrom: number;
  cancelled(): boolean;
  pause?(point: CompactionPoint): Promise<void>;
}

/** At most this much is written per call, so the event loop is never held for long. */
const CHUNK_BYTES = 4 * 1024 * 1024;
const CHUNK_BUFFERS = 1024;

export function tempSnapshotName(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.snapshot.tmp`);
}

/** Writes the captured state as the new data file; returns its size. */
export async function writeSnapshot(
  file: string,
  capture: StoreCapture,
  opts: WriteSnapshotOptions,
): Promise<number> {
  const dir = path.dirname(file);
  const tmp = tempSnapshotName(file);
  // O_DSYNC: each chunk is on the disk when its write returns, so the page cache never holds more
  // than a chunk of the snapshot unwritten. With a whole snapshot dirty, the journal's next durable
  // write (ext4 commits its metadata in order) could wait for all of it to be flushed: every
  // journaled write stalled for as long as the snapshot's flush, which grows with the data
  // (tools/bench/README.md, "soak").
  const handle = await fs.open(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_DSYNC,
  );
  let position = 0;
  let renamed = false;
  try {
    let bufs: Uint8Array[] = [];
    let bytes = 0;
    let chunks = 0;
    const flush = async (): Promise<void> => {
      if (opts.cancelled()) throw new CompactionCancelled();
      const { bytesWritten } = await handle.writev(bufs, position);
      if (bytesWritten !== bytes)
        throw new Error(`short write (${bytesWritten} of ${bytes} bytes)`);
      position += bytes;
      bufs = [];
      bytes = 0;
      if (++chunks === 1) await opts.pause?.('writing');
    };
    /** Adds to the chunk; true when the chunk is full and should be written. */
    const add = (b: Uint8Array): boolean => {
      bufs.push(b);
      bytes += b.length;
      return bytes >= CHUNK_BYTES || bufs.length >= CHUNK_BUFFERS;
    };
    add(
      serialize({
        format: FORMAT,
        version: VERSION,
        writtenAt: new Date(),
        journal: opts.journalFrom,
      }),
    );
    for (const c of capture.collections) {
      const meta = {
        db: c.db,
        collection: c.name,
        options: c.options,
        indexes: c.indexes,
        count: c.raws.length,
      };
      if (add(serialize(meta))) await flush();
      for (const raw of c.raws) if (add(raw)) await flush();
    }
    const end = {
      end: true,
      collections: capture.collections.length,
      documents: capture.documents,
    };
    add(serialize(end));
    await flush();
    await handle.sync();
    await handle.close();
    await opts.pause?.('written');
    await fs.rename(tmp, file);
    renamed = true;
    await syncDir(dir);
    return position;
  } catch (err) {
    await handle.close().catch(() => undefined);
    if (!renamed) await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}
