/**
 * Ports of the read side. The adapters live elsewhere (refsync-api wires the read repository of
 * @nhp/refsync-data-access, its error codes and its logger); this lib stays free of I/O so that
 * its rules can be tested with plain objects.
 */
import type { Dataset } from '@nhp/refsync-contracts';

/** One stored item as the read repository returns it. */
export interface ListedItem {
  data: unknown;
  version: number;
  lastChanged: Date;
  isDeleted: boolean;
}

/** One item as a scan delivers it, with the id it is ordered by. */
export interface ScannedListedItem {
  itemId: string;
  item: ListedItem;
}

/**
 * What the read side needs from storage (structurally the read repository of
 * @nhp/refsync-data-access): the committed version, and the items R1-R3 select at a version,
 * streamed (scanItems: in response order to `onItem`, the few a run under way has replaced as the
 * resolved value), so that a large list is serialised while it is read.
 */
export interface DatasetReader {
  currentVersion(): Promise<number>;
  scanItems(
    dataset: Dataset,
    options: { atVersion: number; sinceVersion?: number },
    onItem: (scanned: ScannedListedItem) => void,
  ): Promise<ScannedListedItem[]>;
}

/**
 * How storage says that a version the caller fixed has been left behind by two syncs (read the
 * version again and ask again), and what a miss answers when that keeps happening.
 */
export interface VersionConflicts {
  /** true for storage's refusal of a version two syncs have left behind (REFSYNC_VERSION_CONFLICT). */
  is(err: unknown): boolean;
  /** The error a miss throws after its last attempt (storage's 503 DATABASE_UNAVAILABLE). */
  exhausted(cause: unknown): Error;
}

/** Minimal logger shape (pino's). */
export interface ReadLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}
