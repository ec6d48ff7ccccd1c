// Persistence with a data file: at start the snapshot (snapshot.ts) is loaded and the journal
// (journal.ts) replayed; from then on every change is journaled, and when the journal has grown
// past `maxBytes` (an absolute size, so that start-up after a crash replays at most that much),
// compaction writes a new snapshot in the background and deletes the journal segments it covers.
// A clean stop writes one too, so the next start replays nothing. README.md ("Persistence")
// describes the files, what a crash can lose and the disk a run needs.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { syncDir } from './framed-file';
import {
  JournalLog,
  JournalWriter,
  listSegments,
  replaySegment,
  segmentName,
  type JournalStats,
} from './journal';
import {
  captureStore,
  CompactionCancelled,
  loadSnapshot,
  writeSnapshot,
  type CompactionPoint,
} from './snapshot';
import type { Store } from './store';

export type { CompactionPoint };

export interface JournalOptions {
  /** How soon writes without `j: true` reach the disk; mongod's commitIntervalMs default is 100. */
  commitIntervalMs?: number;
  /**
   * Compaction starts once the journal (the segments the snapshot does not cover) exceeds this
   * many bytes; default 16 MiB. It bounds what a start after a crash replays.
   */
  maxBytes?: number;
  /**
   * `false`: a stop writes the journal but no snapshot, leaving the files as a crash after the
   * last write would (tests of replay). Default true.
   */
  snapshotOnStop?: boolean;
  /** Test hook: awaited at each point of compaction (a test stops the server there). */
  pauseCompaction?(point: CompactionPoint): Promise<void>;
}

export interface PersistenceStats extends JournalStats {
  /** Compactions completed since start. */
  compactions: number;
  snapshotBytes: number;
  /** Bytes of the journal segments the snapshot does not cover. */
  journalBytes: number;
}

const COMMIT_INTERVAL_MS = 100;
/**
 * Replaying a journal costs far more per byte than loading a snapshot (every record is a document
 * decoded, looked up and re-indexed, most of them replaced again later in the same journal), so
 * the journal is what start-up after a crash must be protected from: bounded absolutely, not in
 * proportion to the snapshot, at the cost of rewriting the snapshot every `maxBytes` of changes
 * (figures: tools/bench/README.md, "soak").
 */
const MAX_JOURNAL_BYTES = 16 * 1024 * 1024;

export class Persistence {
  private compacting: Promise<void> | undefined;
  /** finishStartup while it runs. */
  private finishing: Promise<void> | undefined;
  private closing = false;
  private compactions = 0;
  /** After a failed compaction: the journal size to wait for before trying again. */
  private retryAt = 0;

  private readonly writer: JournalWriter;

  private constructor(
    private readonly store: Store,
    private readonly file: string,
    private readonly logger: Logger,
    private readonly opts: JournalOptions,
    private snapshotBytes: number,
    /** The first journal segment the snapshot does not cover. */
    private snapshotSegment: number,
    writer: (onFlushed: () => void) => JournalWriter,
  ) {
    this.writer = writer(() => this.maybeCompact());
  }

  /** Loads the data file and replays the journal into an empty store, then journals every change. */
  static async open(
    store: Store,
    dataFile: string,
    logger: Logger,
    opts: JournalOptions = {},
  ): Promise<Persistence> {
    const started = process.hrtime.bigint();
    const file = path.resolve(dataFile);
    const dir = path.dirname(file);
    const base = path.basename(file);
    await fs.mkdir(dir, { recursive: true });
    await removeTempFiles(dir, base);
    const snapshot = await loadSnapshot(file, store);
    const journalFrom = snapshot?.journalFrom ?? 1;
    const segments = await listSegments(dir, base);
    // Segments a snapshot covers are left behind by a crash between its rename and their removal.
    for (const n of segments.filter((s) => s < journalFrom))
      await fs.rm(path.join(dir, segmentName(base, n)), { force: true });
    const live = segments.filter((s) => s >= journalFrom);
    live.forEach((n, i) => {
      if (n !== journalFrom + i) {
        throw new Error(
          `journal segment ${path.join(dir, segmentName(base, journalFrom + i))} is missing ` +
            `(the data file covers the segments before ${journalFrom}; found ${live.join(', ')})`,
        );
      }
    });
    const sizes = new Map<number, number>();
    let records = 0;
    for (const [i, n] of live.entries()) {
      const segment = path.join(dir, segmentName(base, n));
      const replayed = await replaySegment(segment, store, i === live.length - 1);
      sizes.set(n, replayed.bytes);
      records += replayed.records;
      if (replayed.truncated > 0) {
        logger.warn(
          { journal: segment, offset: replayed.bytes, bytesCut: replayed.truncated },
          'the journal ended in a torn record (a crash mid-append); cut off after the last good record',
        );
      }
    }
    let documents = 0;
    for (const colls of store.databases.values())
      for (const c of colls.values()) documents += c.documentCount;
    logger.info(
      {
        dataFile: file,
        snapshotVersion: snapshot?.version ?? null,
        journalSegments: live.length,
        journalRecords: records,
        databases: store.databases.size,
        documents,
        ms: Math.round(Number(process.hrtime.bigint() - started) / 1e6),
      },
      snapshot || live.length ? 'data file loaded' : 'data file does not exist yet; starting empty',
    );
    const persistence = new Persistence(
      store,
      file,
      logger,
      opts,
      snapshot?.bytes ?? 0,
      journalFrom,
      (onFlushed) =>
        new JournalWriter({
          dir,
          base,
          segment: live[live.length - 1] ?? journalFrom,
          sizes,
          logger,
          commitIntervalMs: opts.commitIntervalMs ?? COMMIT_INTERVAL_MS,
          onFlushed,
        }),
    );
    store.attachLog(new JournalLog(persistence.writer));
    return persistence;
  }

  /**
   * What start-up leaves until the server answers (the caller starts it then), in the background, a
   * batch per turn of the event loop: a start after a crash is an outage, and these were most of
   * its cost (tools/bench/README.md, "soak").
   * - The documents of the collections the journal did not need loaded (Collection.deferLoad): a
   *   command on one before its turn loads it itself.
   * - The trees of non-unique indexes (Collection.restoreIndex): a request that needs one before
   *   its turn builds it itself.
   * - A buffer of its own for each loaded document. Start-up keeps each as a view into the 8 MiB
   *   chunk of the snapshot or journal it was read from; left so, the chunks would stay alive as
   *   long as any of their documents (README "Memory"), so each is copied here.
   */
  finishStartup(): void {
    const started = process.hrtime.bigint();
    const ms = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    const stopped = () => this.closing;
    this.finishing ??= (async () => {
      const collections = await this.store.loadDeferredCollections(stopped, (coll, err) =>
        this.logger.fatal(
          { err, dataFile: this.file, namespace: coll.ns },
          'a collection in the data files is damaged; it answers every command with an error ' +
            'until the files are repaired',
        ),
      );
      this.logger.info({ collections, ms: ms() }, 'deferred collections loaded');
      await this.store.buildDeferredIndexes(stopped);
      this.logger.info({ ms: ms() }, 'deferred indexes built');
      const documents = await this.store.ownLoadedBytes(stopped);
      this.logger.info({ documents, ms: ms() }, 'loaded documents have buffers of their own');
    })().catch((err: unknown) => this.logger.error({ err }, 'finishing the start-up failed'));
  }

  /** Resolves once every change made so far is written and fsynced (writes with `j: true`). */
  sync(): Promise<void> {
    return this.writer.sync();
  }

  stats(): PersistenceStats {
    return {
      ...this.writer.stats,
      compactions: this.compactions,
      snapshotBytes: this.snapshotBytes,
      journalBytes: this.journalBytes(),
    };
  }

  private journalBytes(): number {
    let bytes = 0;
    for (const [n, size] of this.writer.sizes) if (n >= this.snapshotSegment) bytes += size;
    return bytes;
  }

  private maxBytes(): number {
    return this.opts.maxBytes ?? MAX_JOURNAL_BYTES;
  }

  private maybeCompact(): void {
    if (this.compacting || this.closing) return;
    if (this.journalBytes() <= Math.max(this.maxBytes(), this.retryAt)) return;
    this.compact().catch(() => undefined); // logged where it failed
  }

  /** Writes a new snapshot now (unless one is being written: then waits for that one). */
  compact(): Promise<void> {
    if (this.closing) return Promise.resolve();
    this.compacting ??= this.runCompaction().finally(() => (this.compacting = undefined));
    return this.compacting;
  }

  private async runCompaction(final = false): Promise<void> {
    const started = process.hrtime.bigint();
    const dir = path.dirname(this.file);
    const base = path.basename(this.file);
    // The rotation point: records from here on go to a new segment, and the snapshot holds the
    // state after every record before it. Both happen in this one synchronous step.
    const journalBytes = this.journalBytes();
    const journalFrom = this.writer.rotate();
    const capture = captureStore(this.store);
    this.logger.info(
      { dataFile: this.file, journalBytes, documents: capture.documents, journalFrom },
      final ? 'stop is writing a new snapshot' : 'compaction started',
    );
    try {
      const bytes = await writeSnapshot(this.file, capture, {
        journalFrom,
        cancelled: () => this.closing && !final,
        pause: final ? undefined : this.opts.pauseCompaction,
      });
      this.snapshotBytes = bytes;
      this.snapshotSegment = journalFrom;
      if (!final) await this.opts.pauseCompaction?.('renamed');
      // The covered segments may still get their last records written (the writer finishes a
      // segment before it starts the next); once that is done they can go.
      await this.writer.sync();
      const covered = [...this.writer.sizes.keys()]
        .filter((n) => n < journalFrom)
        .sort((a, b) => a - b);
      for (const n of covered) {
        await fs.rm(path.join(dir, segmentName(base, n)), { force: true });
        this.writer.sizes.delete(n);
      }
      await syncDir(dir);
      this.compactions++;
      this.logger.info(
        {
          dataFile: this.file,
          bytes,
          documents: capture.documents,
          journalFrom,
          segmentsRemoved: covered.length,
          ms: Math.round(Number(process.hrtime.bigint() - started) / 1e6),
        },
        final ? 'stop wrote a new snapshot' : 'compaction wrote a new snapshot',
      );
    } catch (err) {
      if (err instanceof CompactionCancelled) {
        this.logger.info({ dataFile: this.file }, err.message);
        return;
      }
      this.retryAt = this.journalBytes() + this.maxBytes();
      this.logger.error(
        { err, dataFile: this.file },
        'compaction failed; the journal keeps everything, and it is tried again later',
      );
      throw err;
    }
  }

  /**
   * Abandons a running compaction, writes and fsyncs the journal, then writes a snapshot of the
   * final state (unless the journal is empty), so that the next start replays nothing. The caller
   * has stopped every source of changes first (connections, TTL monitor). If that snapshot fails,
   * the journal still holds everything: it is logged and the stop goes on.
   */
  async close(): Promise<void> {
    this.closing = true;
    await this.finishing;
    await this.compacting?.catch(() => undefined);
    await this.writer.sync();
    if (this.opts.snapshotOnStop !== false && this.journalBytes() > 0)
      await this.runCompaction(true).catch(() => undefined);
    await this.writer.close();
  }
}

async function removeTempFiles(dir: string, base: string): Promise<void> {
  for (const name of await fs.readdir(dir)) {
    if (name.startsWith(`.${base}.`) && name.endsWith('.tmp'))
      await fs.rm(path.join(dir, name), { force: true });
  }
}
