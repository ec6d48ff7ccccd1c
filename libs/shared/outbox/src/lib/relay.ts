import { AppError, isAppError } from '@nhp/shared-errors';
import type { Logger } from '@nhp/shared-logger';
import { publishFailed } from '@nhp/shared-messaging';
import { toAppError } from '@nhp/shared-persistence';
import pRetry from 'p-retry';
import {
  documentKey,
  type DocumentRef,
  type OutboxEntry,
  type OutboxStore,
  type PublishOutcome,
  type RelaySummary,
} from './types';

export interface CreateOutboxRelayOptions<E extends OutboxEntry> {
  /** Names the outbox in log lines ("journal relay failed; ..."). */
  name: string;
  store: OutboxStore<E>;
  /**
   * A step before the publish, for every entry (privacy's audit record). A failed relay repeats
   * it, so it must be idempotent by entry id.
   */
  sink?: (entry: E, ref: DocumentRef) => Promise<void>;
  /**
   * Publishes the entry's event and resolves once JetStream acknowledged it (Nats-Msg-Id = the
   * entry's id: a repeat inside the stream's duplicate window is dropped). Resolves at once for an
   * entry that carries no event. Absent: nothing is published, entries are still sunk and settled.
   */
  publish?: (entry: E) => Promise<PublishOutcome | void>;
  logger: Logger;
  /** Every document whose relay failed; default: a warning with the error, naming the outbox. */
  onRelayFailed?: (error: AppError, ref: DocumentRef, during: 'flush' | 'sweep') => void;
  /** After every sweep, whoever started it. */
  onSwept?: (summary: RelaySummary) => void;
  /**
   * Exponential backoff after a failed pass, from `baseDelayMs` (default 500) up to `maxDelayMs`
   * (default 30 s), for `relayUntilDone` and, when given, for the loop (capped at its interval;
   * the loop then also logs its retries). Without it the loop keeps its period.
   */
  backoff?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Documents a sweep relays at once (each one's entries in order). Default 16. */
  sweepConcurrency?: number;
}

export interface OutboxRelay<E extends OutboxEntry = OutboxEntry> {
  /**
   * Relays one document's pending entries in order; stops at its first failure. Never rejects.
   * `pending`: the document's pending entries as the caller's own acknowledged write returned them
   * (so the relay need not read them again); ignored while another relay of the document is under
   * way in this process (it may settle some of them meanwhile), which then reads them after it.
   */
  relay(ref: DocumentRef, pending?: readonly E[]): Promise<RelaySummary>;
  /** Relays the document soon (right after the write that carries its entry was acknowledged). */
  flushSoon(ref: DocumentRef, pending?: readonly E[]): void;
  /**
   * Relays every document the store names; concurrent callers share the sweep in progress.
   * Rejects only when the store cannot tell which documents to visit (or its housekeeping fails).
   */
  sweep(): Promise<RelaySummary>;
  /** Sweeps, with backoff, until nothing is pending or `deadlineMs` has passed; the last summary. */
  relayUntilDone(deadlineMs: number): Promise<RelaySummary>;
  /** Resolves when every relay and sweep started so far has finished. */
  idle(): Promise<void>;
  /** The loop: a sweep now, then after every `kick()` and every `intervalMs`, until `stop()`. */
  start(intervalMs: number): void;
  /** Sweep now instead of at the next interval or backoff step. */
  kick(): void;
  /** Ends the loop and waits for what is in flight. */
  stop(): Promise<void>;
}

const PENDING = 'OUTBOX_EVENTS_PENDING';
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The relay of an outbox: entries recorded in the same write as their change are relayed after
 * that write is acknowledged (`flushSoon`), and by a sweep after a crash or an outage. Each entry
 * goes through the sink, then its publish, and only then is it settled in the store, so a crash or
 * a failure anywhere leaves it pending and a later pass repeats it (at least once on the wire,
 * exactly once in a stream that de-duplicates by Nats-Msg-Id). A document's entries are relayed
 * in order, one relay per document at a time in this process, and a failure stops that document's
 * relay, so its events reach the stream in the order of its changes.
 */
export function createOutboxRelay<E extends OutboxEntry>(
  options: CreateOutboxRelayOptions<E>,
): OutboxRelay<E> {
  const { name, store, logger } = options;
  const sweepConcurrency = Math.max(1, options.sweepConcurrency ?? 16);
  const baseDelayMs = options.backoff?.baseDelayMs ?? 500;
  const maxDelayMs = options.backoff?.maxDelayMs ?? 30_000;
  const onRelayFailed =
    options.onRelayFailed ??
    ((err, ref, during) =>
      logger.warn(
        { err, collection: ref.collection },
        during === 'flush'
          ? `${name} relay failed; the sweeper will retry`
          : `${name} relay failed; will retry`,
      ));

  const chains = new Map<string, Promise<RelaySummary>>();
  const inFlight = new Set<Promise<unknown>>();
  let sweeping: Promise<RelaySummary> | undefined;

  async function relayDocument(ref: DocumentRef, known?: readonly E[]): Promise<RelaySummary> {
    const summary: RelaySummary = { relayed: 0, duplicates: 0, pending: undefined };
    const failed = (err: unknown, error: AppError): RelaySummary => ({
      ...summary,
      error,
      reason: messageOf(err),
    });
    let entries: readonly E[];
    try {
      entries = known ?? (await store.pending(ref));
    } catch (err) {
      return failed(err, toAppError(err));
    }
    summary.pending = entries.length;
    for (const entry of entries) {
      let outcome: PublishOutcome | void;
      try {
        await options.sink?.(entry, ref);
      } catch (err) {
        return failed(err, toAppError(err));
      }
      try {
        outcome = await options.publish?.(entry);
      } catch (err) {
        // NATS's failure, named as such (not as a database error).
        return failed(err, publishFailed(err));
      }
      try {
        await store.settle(ref, entry);
      } catch (err) {
        return failed(err, toAppError(err));
      }
      summary.relayed += 1;
      summary.pending -= 1;
      if (outcome?.duplicate) summary.duplicates += 1;
    }
    return summary;
  }

  function relay(ref: DocumentRef, pending?: readonly E[]): Promise<RelaySummary> {
    const key = documentKey(ref);
    const previous = chains.get(key);
    const known = previous ? undefined : pending;
    const next = (previous ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .then(() => relayDocument(ref, known))
      .finally(() => {
        if (chains.get(key) === next) chains.delete(key);
      });
    chains.set(key, next);
    return next;
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  async function sweepOnce(): Promise<RelaySummary> {
    const total: RelaySummary = { relayed: 0, duplicates: 0, pending: 0 };
    const refs = await store.documents();
    const add = (ref: DocumentRef, summary: RelaySummary) => {
      total.relayed += summary.relayed;
      total.duplicates += summary.duplicates;
      total.pending =
        total.pending === undefined || summary.pending === undefined
          ? undefined
          : total.pending + summary.pending;
      if (!summary.error) return;
      onRelayFailed(summary.error, ref, 'sweep');
      if (!total.error) {
        total.error = summary.error;
        total.reason = summary.reason;
      }
    };
    // Documents are independent (order is kept within each one), so a sweep relays several at
    // once: one after the other, each paying its round trips and journal commits in turn, a sweep
    // of a few dozen documents under load took longer than the sweep interval, and what a crashed
    // instance left waited that long. Their writes then also share commands (batchedWrites).
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < refs.length; i = next++) {
        const ref = refs[i] as DocumentRef;
        add(ref, await relay(ref));
      }
    };
    await Promise.all(Array.from({ length: Math.min(sweepConcurrency, refs.length) }, worker));
    await store.afterSweep?.();
    options.onSwept?.(total);
    return total;
  }

  function sweep(): Promise<RelaySummary> {
    sweeping ??= track(
      sweepOnce()
        .catch((err: unknown) => {
          throw toAppError(err);
        })
        .finally(() => {
          sweeping = undefined;
        }),
    );
    return sweeping;
  }

  /** One sweep that throws while entries stay pending, so p-retry backs off and tries again. */
  async function sweepOrThrow(): Promise<RelaySummary> {
    const summary = await sweep().catch((err: AppError): RelaySummary => ({
      relayed: 0,
      duplicates: 0,
      pending: undefined,
      error: err,
      reason: err.message,
    }));
    if (summary.error) {
      throw new AppError({
        code: PENDING,
        status: 503,
        category: 'unavailable',
        message: summary.reason ?? summary.error.message,
        details: summary,
      });
    }
    return summary;
  }

  const summaryOf = (err: unknown): RelaySummary | undefined =>
    isAppError(err) && err.code === PENDING ? (err.details as RelaySummary) : undefined;

  const retryOptions = (maxDelay: number) => ({
    retries: Number.POSITIVE_INFINITY,
    minTimeout: Math.min(baseDelayMs, maxDelay),
    maxTimeout: maxDelay,
    factor: 2,
    randomize: true,
  });

  const logRetry = (error: Error, retryDelay: number) =>
    logger.warn(
      { pending: summaryOf(error)?.pending, reason: error.message, retryInMs: retryDelay },
      'events not yet published, retrying',
    );

  let running = false;
  /** Aborted by kick() and stop(): cuts a backoff or an interval short. */
  let wake = new AbortController();
  let loopDone: Promise<void> | undefined;

  async function loopPass(intervalMs: number, signal: AbortSignal): Promise<void> {
    if (!options.backoff) {
      await sweep().catch((err: unknown) => logger.warn({ err }, `${name} sweep failed`));
      return;
    }
    await pRetry(sweepOrThrow, {
      ...retryOptions(Math.min(intervalMs, maxDelayMs)),
      signal,
      unref: true,
      onFailedAttempt: ({ error, attemptNumber, retryDelay }) => {
        if (attemptNumber === 1 || attemptNumber % 10 === 0) logRetry(error, retryDelay);
      },
    }).catch(() => undefined); // woken by kick() or stop(): go round again, or end
  }

  async function idle(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return {
    relay,
    sweep,
    idle,

    flushSoon(ref, pending) {
      track(
        relay(ref, pending).then((summary) => {
          if (summary.error) onRelayFailed(summary.error, ref, 'flush');
        }),
      );
    },

    async relayUntilDone(deadlineMs) {
      try {
        return await pRetry(sweepOrThrow, {
          ...retryOptions(maxDelayMs),
          maxRetryTime: deadlineMs,
          onFailedAttempt: ({ error, retryDelay }) => {
            if (retryDelay > 0) logRetry(error, retryDelay);
          },
        });
      } catch (err) {
        return (
          summaryOf(err) ?? {
            relayed: 0,
            duplicates: 0,
            pending: undefined,
            error: toAppError(err),
            reason: messageOf(err),
          }
        );
      }
    },

    start(intervalMs) {
      if (running) return;
      running = true;
      if (wake.signal.aborted) wake = new AbortController();
      loopDone = (async () => {
        while (running) {
          const signal = wake.signal;
          await loopPass(intervalMs, signal);
          if (!running) break;
          await sleep(intervalMs, signal);
          if (signal.aborted) wake = new AbortController();
        }
      })();
    },

    kick() {
      wake.abort();
    },

    async stop() {
      running = false;
      wake.abort();
      await loopDone;
      await idle();
    },
  };
}

/** Waits `ms` unless `signal` aborts first; does not keep the process alive. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
