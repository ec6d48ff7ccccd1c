// All databases and collections of one server, plus namespace rules and change notification
// (persistence listens to it).
import { Collection } from './collection';
import { MongoServerError } from './errors';
import type { Doc } from './values';

export class Store {
  readonly databases = new Map<string, Map<string, Collection>>();
  private listeners: Array<() => void> = [];

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  changed(): void {
    for (const l of this.listeners) l();
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
      this.changed();
    }
    return coll;
  }

  dropCollection(db: string, name: string): Collection | undefined {
    const database = this.databases.get(db);
    const coll = database?.get(name);
    if (!database || !coll) return undefined;
    database.delete(name);
    if (database.size === 0) this.databases.delete(db);
    this.changed();
    return coll;
  }

  dropDatabase(db: string): boolean {
    const existed = this.databases.delete(db);
    if (existed) this.changed();
    return existed;
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
