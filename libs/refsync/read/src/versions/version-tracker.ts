import type { ReadLogger } from '../ports';

export type RefreshReason = 'start' | 'event' | 'reconnect' | 'periodic' | 'request';

export interface VersionTrackerOptions {
  /** Reads the committed data version from storage. */
  read: () => Promise<number>;
  logger: ReadLogger;
  /** Called once per observed change (also for the first successful read). */
  onChange: (version: number, previous: number | undefined, reason: RefreshReason) => void;
}

/**
 * Holds the committed data version in memory, so the hot path never reads it from the database.
 * It is refreshed on the sync-completed event, by a periodic check, and on a cache miss.
 *
 * Every refresh() answers with a read that started after the call: a read already under way may
 * have started before the commit that an event announces, so joining it could miss that commit.
 * At most one read runs and at most one more is queued, however many callers ask.
 */
export class VersionTracker {
  private version: number | undefined;
  private inFlight: Promise<number> | undefined;
  private queued: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: VersionTrackerOptions) {}

  /** The last version read, or undefined before the first successful read. */
  current(): number | undefined {
    return this.version;
  }

  refresh(reason: RefreshReason): Promise<number> {
    if (this.queued) return this.queued;
    if (this.inFlight) {
      const queued = this.inFlight
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => {
          this.queued = undefined;
          return this.start(reason);
        });
      this.queued = queued;
      return queued;
    }
    return this.start(reason);
  }

  /** Checks the stored version every `intervalMs`; the timer never keeps the process alive. */
  startPeriodicCheck(intervalMs: number): void {
    this.stopPeriodicCheck();
    this.timer = setInterval(() => {
      this.refresh('periodic').catch((err: unknown) =>
        this.options.logger.warn({ err }, 'periodic data version check failed'),
      );
    }, intervalMs);
    this.timer.unref();
  }

  stopPeriodicCheck(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(reason: RefreshReason): Promise<number> {
    const read: Promise<number> = this.options
      .read()
      .then((version) => {
        const previous = this.version;
        if (version !== previous) {
          this.version = version;
          this.options.onChange(version, previous, reason);
        }
        return version;
      })
      .finally(() => {
        if (this.inFlight === read) this.inFlight = undefined;
      });
    this.inFlight = read;
    return read;
  }
}
