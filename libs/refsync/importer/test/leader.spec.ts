import type { Lease, LeaseRepository } from '@nhp/refsync-data-access';
import { createLogger } from '@nhp/shared-logger';
import { acquireLease } from '../src';

/** The lease repository's contract in memory, judged by the clock it is given (as the real one). */
function memoryLeases(): LeaseRepository {
  let lease: Lease | null = null;
  return {
    async acquire(holder, ttlMs, now = new Date()) {
      if (lease && lease.holder !== holder && lease.expiresAt > now)
        return { acquired: false, heldBy: lease };
      lease = {
        name: 'refsync-importer',
        holder,
        acquiredAt: now,
        renewedAt: now,
        expiresAt: new Date(now.getTime() + ttlMs),
      };
      return { acquired: true, lease };
    },
    async renew(holder, ttlMs, now = new Date()) {
      if (!lease || lease.holder !== holder || lease.expiresAt <= now) return false;
      lease = { ...lease, renewedAt: now, expiresAt: new Date(now.getTime() + ttlMs) };
      return true;
    },
    async release(holder, now = new Date()) {
      if (lease?.holder === holder) lease = { ...lease, expiresAt: now };
    },
    async current() {
      return lease;
    },
  };
}

const logger = createLogger({ name: 'leader-test', level: 'silent' });

describe('acquireLease', () => {
  it('when the holder stalls past its TTL and another instance takes the lease, then assertHeld refuses the commit', async () => {
    let clockMs = Date.parse('2026-11-23T02:00:00Z');
    const now = () => new Date(clockMs);
    const leases = memoryLeases();
    const attempt = await acquireLease(leases, { holder: 'a', ttlMs: 60_000, logger, now });
    if (!attempt.acquired) throw new Error('expected the free lease to be taken');
    await expect(attempt.lease.assertHeld()).resolves.toBeUndefined();

    clockMs += 61_000; // a stalled process: no renewal for longer than the TTL
    expect(await leases.acquire('b', 60_000, now())).toMatchObject({ acquired: true });
    await expect(attempt.lease.assertHeld()).rejects.toMatchObject({
      code: 'SYNC_LEASE_LOST',
      details: { reason: 'lease_lost' },
    });
    await attempt.lease.release();
    expect(await leases.current()).toMatchObject({ holder: 'b' }); // a lost lease is not released
  });

  it('when another instance holds a live lease, then it is not acquired and the holder is named', async () => {
    const now = () => new Date('2026-11-23T02:00:00Z');
    const leases = memoryLeases();
    await leases.acquire('b', 60_000, now());
    expect(await acquireLease(leases, { holder: 'a', ttlMs: 60_000, logger, now })).toMatchObject({
      acquired: false,
      heldBy: { holder: 'b' },
    });
  });
});
