/**
 * Concurrent callers asking for the same key share one computation: a cold cache under load
 * runs each expensive query, serialisation or compression once, not once per waiting request.
 * The key is forgotten when the computation settles, so a failure is not cached.
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  run(key: string, compute: () => Promise<T>): Promise<T> {
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    // Deferred to a microtask so that even a synchronous throw settles after the key is registered.
    const started: Promise<T> = Promise.resolve()
      .then(compute)
      .finally(() => {
        if (this.inFlight.get(key) === started) this.inFlight.delete(key);
      });
    this.inFlight.set(key, started);
    return started;
  }

  get size(): number {
    return this.inFlight.size;
  }
}
