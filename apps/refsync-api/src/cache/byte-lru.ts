/**
 * A least-recently-used map bounded by the total byte size of its values.
 *
 * Hand-written rather than taken from `lru-cache`: that package is only present here as a
 * transitive dependency of the build tooling (in several major versions), and what we need is the
 * forty lines below on top of `Map`, whose iteration order is insertion order. Re-inserting an
 * entry on every hit moves it to the young end, so the first key is always the least recently used.
 */
export interface ByteLruOptions<V> {
  maxBytes: number;
  /** Bytes an entry accounts for (its body plus a small fixed overhead is a fair estimate). */
  sizeOf: (value: V) => number;
  /** Called for entries pushed out by the byte bound, not for explicit deletes. */
  onEvict?: (key: string, value: V) => void;
}

export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; size: number }>();
  private bytes = 0;

  constructor(private readonly options: ByteLruOptions<V>) {}

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  get maxBytes(): number {
    return this.options.maxBytes;
  }

  /** The value, marked as most recently used; undefined on a miss. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Stores the value and evicts least recently used entries until the bound holds. A value larger
   * than the whole bound is not stored (it would evict everything and then itself): returns false.
   */
  set(key: string, value: V): boolean {
    const size = this.options.sizeOf(value);
    this.delete(key);
    if (size > this.options.maxBytes) return false;
    this.entries.set(key, { value, size });
    this.bytes += size;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.options.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.size;
      this.options.onEvict?.(oldest, entry.value);
    }
    return true;
  }

  delete(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    this.bytes -= entry.size;
    return true;
  }

  /** Deletes every entry the predicate selects; returns how many. */
  deleteWhere(predicate: (key: string, value: V) => boolean): number {
    let removed = 0;
    for (const [key, entry] of this.entries) {
      if (predicate(key, entry.value)) {
        this.entries.delete(key);
        this.bytes -= entry.size;
        removed++;
      }
    }
    return removed;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  /** The values, least recently used first, without touching their recency. */
  values(): V[] {
    return [...this.entries.values()].map((e) => e.value);
  }
}
