// The optional data file: a sequence of BSON documents (a header, then per collection a description
// followed by its documents), so that every BSON type round-trips and no single BSON document has to
// hold a whole database. Snapshots are written atomically: temp file in the same directory, fsync,
// rename over the old file.
import { deserialize, serialize } from 'bson';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { IndexSpec } from './indexes';
import type { Store } from './store';
import type { Doc } from './values';
import { DESERIALIZE } from './wire';

const FORMAT = 'nhp-mongo-server-snapshot';
const VERSION = 1;

export function encodeSnapshot(store: Store): Buffer {
  const parts: Uint8Array[] = [
    serialize({ format: FORMAT, version: VERSION, writtenAt: new Date() }),
  ];
  for (const [db, colls] of store.databases) {
    for (const coll of colls.values()) {
      const indexes = [...coll.indexes.values()]
        .filter((i) => i.name !== '_id_')
        .map((i) => i.spec);
      parts.push(
        serialize({
          db,
          collection: coll.name,
          options: coll.options,
          indexes,
          count: coll.records.size,
        }),
      );
      for (const r of coll.records) parts.push(r.raw ?? serialize(r.doc));
    }
  }
  return Buffer.concat(parts);
}

export function decodeSnapshot(buf: Buffer, store: Store): void {
  let at = 0;
  const next = (): Doc => {
    if (at + 4 > buf.length) throw new Error('data file is truncated');
    const size = buf.readInt32LE(at);
    if (size < 5 || at + size > buf.length) throw new Error('data file is truncated');
    const doc = deserialize(buf.subarray(at, at + size), DESERIALIZE) as Doc;
    at += size;
    return doc;
  };
  const header = next();
  if (header['format'] !== FORMAT) throw new Error('not a mongo-server data file');
  while (at < buf.length) {
    const meta = next();
    const coll = store.ensureCollection(
      String(meta['db']),
      String(meta['collection']),
      (meta['options'] as Doc) ?? {},
    );
    for (const spec of (meta['indexes'] as IndexSpec[]) ?? []) coll.createIndex(spec);
    const count = Number(meta['count']?.valueOf());
    for (let i = 0; i < count; i++) coll.insert(next());
  }
}

export async function loadDataFile(file: string, store: Store, logger: Logger): Promise<void> {
  let buf: Buffer;
  try {
    buf = await fs.readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      logger.info({ dataFile: file }, 'data file does not exist yet; starting empty');
      return;
    }
    throw err;
  }
  if (buf.length === 0) return;
  decodeSnapshot(buf, store);
  let docs = 0;
  for (const colls of store.databases.values())
    for (const c of colls.values()) docs += c.records.size;
  logger.info(
    { dataFile: file, databases: store.databases.size, documents: docs },
    'data file loaded',
  );
}

/** Writes snapshots after changes, debounced, never two at once; `flush()` writes now if dirty. */
export class Snapshotter {
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private firstDirtyAt = 0;
  private writing: Promise<void> = Promise.resolve();
  private seq = 0;

  constructor(
    private readonly file: string,
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly delayMs = 200,
    private readonly maxDelayMs = 2000,
  ) {
    store.onChange(() => this.markDirty());
  }

  private markDirty(): void {
    const now = Date.now();
    if (!this.dirty) this.firstDirtyAt = now;
    this.dirty = true;
    if (this.timer) clearTimeout(this.timer);
    // Keep postponing while writes keep coming, but never beyond maxDelayMs after the first change.
    const wait = Math.max(0, Math.min(this.delayMs, this.firstDirtyAt + this.maxDelayMs - now));
    this.timer = setTimeout(() => void this.flush().catch(() => undefined), wait);
    this.timer.unref();
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const run = this.writing.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      // Encoded synchronously, so the snapshot is a consistent state of the store.
      const data = encodeSnapshot(this.store);
      try {
        await writeAtomically(this.file, data, ++this.seq);
        this.logger.debug({ dataFile: this.file, bytes: data.length }, 'snapshot written');
      } catch (err) {
        this.dirty = true;
        this.logger.error({ err, dataFile: this.file }, 'snapshot failed');
        throw err;
      }
    });
    this.writing = run.catch(() => undefined);
    return run;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

async function writeAtomically(file: string, data: Buffer, seq: number): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  await fs.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${seq}.tmp`);
  const handle = await fs.open(tmp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(tmp, file);
  // Make the rename itself durable; not every platform lets a directory be opened, so best effort.
  try {
    const d = await fs.open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    /* directory fsync unsupported here */
  }
}
