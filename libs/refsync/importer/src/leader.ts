import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Lease, LeaseRepository } from '@nhp/refsync-data-access';
import { syncAborted } from '@nhp/refsync-sync';
import type { Logger } from '@nhp/shared-logger';

/** Identifies this process as a lease holder in logs, run records and the lease document. */
export function instanceId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

export interface HeldLease {
  /** Extends the lease now; throws the `lease_lost` abort when another instance has it. */
  assertHeld(): Promise<void>;
  release(): Promise<void>;
}

export type LeaseAttempt =
  { acquired: true; lease: HeldLease } | { acquired: false; heldBy: Lease | null };

export interface AcquireLeaseOptions {
  holder: string;
  ttlMs: number;
  logger: Logger;
  /**
   * The clock expiry is judged by (taken, renewed, released "now"). Tests inject one to let a
   * lease expire without waiting; the renewal timer itself runs on real time.
   */
  now?: () => Date;
}

/**
 * Takes the single-writer lease for one run and keeps it alive with a renewal every third of its
 * TTL. If a renewal finds the lease gone (this process stalled longer than the TTL and another
 * instance took over), the run must not commit: `assertHeld` before the commit enforces that.
 */
export async function acquireLease(
  leases: LeaseRepository,
  options: AcquireLeaseOptions,
): Promise<LeaseAttempt> {
  const { holder, ttlMs, logger } = options;
  const now = options.now ?? (() => new Date());
  const attempt = await leases.acquire(holder, ttlMs, now());
  if (!attempt.acquired) return attempt;

  let lost = false;
  const renew = async (): Promise<boolean> => {
    if (lost) return false;
    const ok = await leases.renew(holder, ttlMs, now());
    if (!ok) {
      lost = true;
      logger.error(
        { holder },
        'importer lease lost: another instance took over; this run will not commit',
      );
    }
    return ok;
  };
  const timer = setInterval(
    () => {
      renew().catch((err: unknown) => logger.warn({ err }, 'could not renew the importer lease'));
    },
    Math.max(1000, Math.floor(ttlMs / 3)),
  );
  timer.unref();

  return {
    acquired: true,
    lease: {
      async assertHeld() {
        if (!(await renew())) {
          throw syncAborted(
            'lease_lost',
            'the importer lease was lost to another instance; nothing committed',
          );
        }
      },
      async release() {
        clearInterval(timer);
        if (!lost) await leases.release(holder, now());
      },
    },
  };
}
