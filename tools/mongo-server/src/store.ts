// All databases and collections of one server, plus namespace rules. Every change goes through the
// primitives here and in collection.ts, which report it to the change log (the journal) if any.
import { Collection, type ChangeLog } from './collection';
import { MongoServerError } from './errors';
import { ownBytes } from './indexes';
import type { Doc } from './values';

/**
 * Work per turn of the event loop for what start-up leaves until the server answers: a request that
 * arrives meanwhile waits for the batch under way, so batches are kept small (figures:
 * tools/mongo-server/README.md, "Persistence"). Records given bytes of their own per turn:
 */
const OWN_BYTES_BATCH = 512;
/** Records added to a deferred index's tree per turn. */
const INDEX_BUILD_BATCH = 256;
/** Documents loaded into a collection whose load was deferred, per turn. */
const LOAD_BATCH = 512;

export class Store {
  readonly databases = new Map<string, Map<string, Collection>>();
  private log: ChangeLog | undefined;

  /** From now on every change is reported to `log` (after the data files have been replayed). */
  attachLog(log: ChangeLog | undefined): void {
    this.log = log;
    for (const colls of this.databases.values()) for (const c of colls.values()) c.log = log;
  }

  /**
   * Loads the documents of the collections whose load start-up deferred (Collection.deferLoad), a
   * batch per turn of the event loop so that requests are answered meanwhile; ends early once
   * `stopped()`. A command on one of them before its turn loads the rest of it itself. A collection
   * whose documents turn out to be damaged is reported to `damaged` and left (it answers every
   * command with that error).
   */
  async loadDeferredCollections(
    stopped: () => boolean,
    damaged: (coll: Collection, err: unknown) => void,
  ): Promise<number> {
    let loaded = 0;
    for (const colls of [...this.databases.values()]) {
      for (const coll of [...colls.values()]) {
        // A damaged one stays pending: loadSome throws its damage again, so it is reported even
        // when a command found it first.
        if (!coll.loadPending) continue;
        loaded++;
        try {
          while (coll.loadSome(LOAD_BATCH)) {
            await new Promise(setImmediate);
            if (stopped()) return loaded;
          }
        } catch (err) {
          damaged(coll, err);
        }
      }
    }
    return loaded;
  }

  /**
   * Builds the trees of the indexes start-up deferred (Collection.restoreIndex), a batch of records
   * per turn of the event loop so that requests are answered meanwhile; ends early once
   * `stopped()`. A request that needs one of them before it is complete completes it itself
   * (Index.buildSome); writes meanwhile change the trees as they are built (Index.building says
   * why that is safe).
   */
  async buildDeferredIndexes(stopped: () => boolean): Promise<void> {
    for (const colls of [...this.databases.values()]) {
      for (const coll of [...colls.values()]) {
        if (coll.damaged) continue;
        while (coll.buildDeferredIndexes(INDEX_BUILD_BATCH)) {
          await new Promise(setImmediate);
          if (stopped()) return;
        }
      }
    }
  }

  /**
   * Gives every stored document's bytes a buffer of their own (indexes.ts ownBytes), a batch per
   * turn of the event loop so that requests are answered meanwhile; ends early once `stopped()`.
   * Start-up leaves the documents it loads as views into the chunks of the files they were read
   * from (Persistence.finishStartup says why); once this has run, those chunks are garbage. Safe beside
   * writes: bytes are never changed in place, so a copy holds the same document, and a record
   * written since already has bytes of its own.
   */
  async ownLoadedBytes(stopped: () => boolean): Promise<number> {
    let copied = 0;
    let n = 0;
    for (const colls of [...this.databases.values()]) {
      for (const coll of [...colls.values()]) {
        if (coll.damaged) continue;
        for (const record of coll.records) {
          const raw = record.raw;
          if (raw) {
            const own = ownBytes(raw);
            if (own !== raw) {
              record.raw = own;
              copied++;
            }
          }
          if (++n % OWN_BYTES_BATCH === 0) {
            await new Promise(setImmediate);
            if (stopped()) return copied;
          }
        }
      }
    }
    return copied;
  }

  collection(db: string, name: string): Collection | undefined {
    return this.databases.get(db)?.get(name);
  }

  /** The collection, created implicitly as MongoDB does on the first write. */
  ensureCollection(db: string, name: string, options: Doc = {}): Collection {
    validateNamespace(db, name);
    let database = this.databases.get(db);
    if (!database) this.databases.set(db, (database = new Map()));
    let coll = database.get(name);
    if (!coll) {
      database.set(name, (coll = new Collection(db, name, options)));
      coll.log = this.log;
      this.log?.created(coll);
    }
    return coll;
  }

  dropCollection(db: string, name: string): Collection | undefined {
    const database = this.databases.get(db);
    const coll = database?.get(name);
    if (!database || !coll) return undefined;
    database.delete(name);
    if (database.size === 0) this.databases.delete(db);
    coll.log = undefined;
    this.log?.dropped(db, name);
    return coll;
  }

  dropDatabase(db: string): boolean {
    const database = this.databases.get(db);
    if (!database) return false;
    this.databases.delete(db);
    for (const c of database.values()) c.log = undefined;
    this.log?.droppedDatabase(db);
    return true;
  }
}

export function validateDbName(db: string): void {
  if (!db || /[/\\. "$*<>:|?\0]/.test(db) || db.length > 63) {
    throw new MongoServerError('InvalidNamespace', `Invalid database name: '${db}'`);
  }
}

export function validateNamespace(db: string, name: string): void {
  validateDbName(db);
  if (
    typeof name !== 'string' ||
    name.length === 0 ||
    name.includes('$') ||
    name.includes('\0') ||
    name.startsWith('.')
  ) {
    throw new MongoServerError(
      'InvalidNamespace',
      `Invalid namespace specified '${db}.${String(name)}'`,
    );
  }
  if (name.startsWith('system.')) {
    throw new MongoServerError('InvalidNamespace', `Invalid system namespace: ${db}.${name}`);
  }
}
