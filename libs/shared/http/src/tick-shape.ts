import { AsyncResource } from 'node:async_hooks';

let kept: object | undefined;

/**
 * Keeps alive, for the life of the process, an object built like `process.nextTick`'s tick
 * objects, so that the hidden classes ("maps") their object literal goes through are never
 * collected.
 *
 * Why: `nextTick` builds each tick object with a literal of computed symbol keys
 * (`{[async_id_symbol]: ..., [trigger_async_id_symbol]: ..., callback, args}`), whose maps are
 * reachable only from live objects of that shape. A tick object lives for one turn, so a full
 * garbage collection that finds none alive collects those maps; the next tick builds new ones, and
 * after a few such collections the literal's inline caches go megamorphic for good and every tick
 * object is built in V8's runtime: 220-360 ns a `nextTick` against 50-100 (Node 20, measured in
 * isolation). A status check queues about six ticks in Node's streams: 1.1-1.6 us of its 70-80 in
 * the profiles where it had happened (tools/bench/README.md, privacy-api), and whether it happens
 * depends on when the collections fall, so the same build measured differently from run to run.
 * With one object of that shape alive, its map and every map before it stay reachable and the
 * caches stay monomorphic (test/tick-shape.spec.ts shows both).
 *
 * How: the two symbols are Node's own, read from an AsyncResource (which carries them as own
 * properties); the literal below is nextTick's (lib/internal/process/task_queues.js), key for key
 * and in order, so it goes through the same maps. Not through an async hook that would catch a real
 * tick object: enabling any promise hook, even for a moment, leaves V8's promise operations on
 * their slow paths for the rest of the process (promise-heavy code 25% slower, measured). A Node
 * whose resources name the symbols otherwise keeps nothing.
 */
export function keepTickObjectShape(): void {
  if (kept !== undefined) return;
  const symbols = Object.getOwnPropertySymbols(new AsyncResource('nhp.tick-shape'));
  const asyncId = symbols.find((s) => s.description === 'async_id_symbol');
  const triggerAsyncId = symbols.find((s) => s.description === 'trigger_async_id_symbol');
  if (asyncId === undefined || triggerAsyncId === undefined) {
    kept = {};
    return;
  }
  kept = { [asyncId]: 1, [triggerAsyncId]: 0, callback: noop, args: undefined };
}

/** The object kept (for the tests). */
export function keptTickObject(): object | undefined {
  return kept;
}

function noop(): void {
  // Only the object's shape matters.
}
