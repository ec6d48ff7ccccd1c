/**
 * Work asked for in one turn of the event loop, grouped by key and handed over together after the
 * turn's I/O callbacks (`setImmediate`): what a busy server reads from its sockets at once then
 * shares one database command. Used by the coalesced point reads and by shared-outbox's batched
 * writes. Hand-written: dataloader could be scheduled the same way (`batchScheduleFn` with
 * `setImmediate`; its default, after the current promise jobs, sees only the work of the callback
 * that asked first), but it keeps one loader per group and answers one value per key, so each user
 * would need a map of loaders and would have to turn its results (per-statement write errors,
 * documents found by key) into arrays: more code around it than this grouping.
 */
export interface PerTurn<K, T> {
  /** Queues `item` under `key`; the first item of a turn schedules the hand-over. */
  add(key: K, item: T): void;
}

/** `send(key, items)` gets each key's items of a turn, at most `max` at a time, in asked order. */
export function perTurn<K, T>(
  send: (key: K, items: T[]) => void,
  options: { max: number; wrap?: (flush: () => void) => void },
): PerTurn<K, T> {
  let waiting = new Map<K, T[]>();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const due = waiting;
    waiting = new Map();
    for (const [key, items] of due) {
      for (let i = 0; i < items.length; i += options.max) {
        send(key, items.slice(i, i + options.max));
      }
    }
  };
  const { wrap } = options;
  const run = wrap ? () => wrap(flush) : flush;
  return {
    add(key, item) {
      const queue = waiting.get(key);
      if (queue) queue.push(item);
      else waiting.set(key, [item]);
      if (!scheduled) {
        scheduled = true;
        // After the I/O callbacks of this turn: the work asked for meanwhile goes out together.
        setImmediate(run);
      }
    },
  };
}
