// TTL indexes: like mongod's TTL monitor, remove documents whose indexed date (or earliest date in an
// array) is older than expireAfterSeconds. Documents without a date in the field never expire.
import type { Logger } from 'pino';
import type { Store } from './store';
import { ARRAY, OTHER, topValue } from './raw';
import { valuesAtPath } from './values';

export function ttlSweep(store: Store, logger: Logger, now = Date.now()): number {
  let removed = 0;
  for (const colls of store.databases.values()) {
    for (const coll of colls.values()) {
      // A damaged collection answers nothing (Collection.loadSome); its loading reported it.
      if (coll.damaged) continue;
      for (const index of coll.indexes.values()) {
        const secs = index.spec.expireAfterSeconds;
        if (secs === undefined) continue;
        const field = index.fields[0] as string;
        for (const record of [...coll.records]) {
          // A top-level date (the usual TTL field) is read from the bytes; anything else decodes.
          const top = field.includes('.') || !record.raw ? OTHER : topValue(record.raw, field);
          const values = top === OTHER || top === ARRAY ? valuesAtPath(record.view, field) : [top];
          const dates = values.filter((v): v is Date => v instanceof Date);
          if (dates.length === 0) continue;
          const earliest = Math.min(...dates.map((d) => d.getTime()));
          if (earliest + secs * 1000 <= now) {
            coll.remove(record);
            removed++;
          }
        }
      }
    }
  }
  // Each removal is journaled by Collection.remove, as any other delete.
  if (removed) logger.debug({ removed }, 'TTL monitor removed expired documents');
  return removed;
}
