import mongoose from 'mongoose';
import { createLeaseRepository, createRunRepository } from '@nhp/refsync-data-access';
import { AppError } from '@nhp/shared-errors';
import { Scrape, useTestInfra } from '@nhp/shared-testing';
import {
  readerView,
  rg,
  startContext,
  testConfig,
  tg,
  useUpstreamFiles,
  writeUpstream,
} from './helpers';

const infra = useTestInfra();

describe('single leader', () => {
  const files = useUpstreamFiles();
  const { contexts } = files;

  async function twoImporters(name: string, now?: () => Date) {
    const env = {
      REFSYNC_SOURCE_TREATMENT_GROUP: await writeUpstream(
        files.dir,
        `${name}-tg.json`,
        Array.from({ length: 300 }, (_, i) => tg(`T${i}`)),
      ),
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: await writeUpstream(files.dir, `${name}-rg.json`, [
        rg('R1'),
      ]),
    };
    const first = await startContext(testConfig(infra.get(), env), { connectToNats: false, now });
    const second = await startContext(testConfig(infra.get(), env, first.config.MONGO_URL), {
      connectToNats: false,
      now,
    });
    contexts.push(first, second);
    return [first, second] as const;
  }

  it('when two importers start a run together, then exactly one run commits', async () => {
    const [a, b] = await twoImporters('together');
    expect(a.instance).not.toBe(b.instance);
    const reports = await Promise.all([
      a.importer.run({ trigger: 'schedule' }),
      b.importer.run({ trigger: 'schedule' }),
    ]);
    const outcomes = reports.map((r) => r.outcome).sort();
    // The loser either skipped (the winner held the lease) or ran after it and found nothing new.
    expect(outcomes.filter((o) => o === 'committed')).toHaveLength(1);
    expect(outcomes.every((o) => ['committed', 'skipped', 'unchanged'].includes(o))).toBe(true);
    expect((await readerView(a.conn)).version).toBe(1);
    const skipped = reports.find((r) => r.outcome === 'skipped');
    if (skipped) expect(skipped.error?.message).toMatch(/holds the lease/);
  });

  it('when another instance holds a live lease, then a run skips and says who holds it; once it expires, a run proceeds', async () => {
    // The importer's clock, moved forward instead of waiting for the lease to expire.
    let aheadMs = 0;
    const clock = () => new Date(Date.now() + aheadMs);
    const [a] = await twoImporters('held', clock);
    const leases = createLeaseRepository(a.conn);
    expect(await leases.acquire('dead-instance', 60_000, clock())).toMatchObject({
      acquired: true,
    });

    const skipped = await a.importer.run({ trigger: 'schedule' });
    expect(skipped).toMatchObject({ outcome: 'skipped', error: { reason: 'lease_held' } });
    expect(skipped.error?.message).toContain('dead-instance');
    expect((await a.runs.get(skipped.runId))?.outcome).toBe('skipped');

    const overdue = async () =>
      new Scrape(await a.metrics.registry.metrics()).value(
        'refsync_importer_lease_overdue_seconds',
      );
    expect(await overdue()).toBe(0);

    // The holder died (never renews): two minutes on, its lease has expired and is free, held a
    // minute past its TTL (the alert rules read that).
    aheadMs = 120_000;
    expect(await overdue()).toBeGreaterThanOrEqual(60);
    expect(await overdue()).toBeLessThan(90);
    expect(await a.importer.run({ trigger: 'schedule' })).toMatchObject({ outcome: 'committed' });
    expect(await leases.current()).toMatchObject({ holder: a.instance });
    // Taken over and released by the run: no longer overdue.
    expect(await overdue()).toBe(0);
  });
});

describe('lease repository', () => {
  it('when two holders race for the lease, then one gets it, renewals work only for the holder, and release frees it', async () => {
    const ctx = await startContext(testConfig(infra.get(), {}), { connectToNats: false });
    try {
      const leases = createLeaseRepository(ctx.conn, 'test-lease');
      const [x, y] = await Promise.all([leases.acquire('x', 10_000), leases.acquire('y', 10_000)]);
      expect([x.acquired, y.acquired].sort()).toEqual([false, true]);
      const winner = x.acquired ? 'x' : 'y';
      const loser = x.acquired ? 'y' : 'x';
      const lost = x.acquired ? y : x;
      expect(lost).toMatchObject({ acquired: false, heldBy: { holder: winner } });
      expect(await leases.renew(winner, 10_000)).toBe(true);
      expect(await leases.renew(loser, 10_000)).toBe(false);
      expect((await leases.acquire(winner, 10_000)).acquired).toBe(true); // re-entrant for its holder
      await leases.release(winner);
      expect((await leases.acquire(loser, 10_000)).acquired).toBe(true);
      expect(await leases.renew(winner, 10_000)).toBe(false);
    } finally {
      await ctx.close();
    }
  });

  it('when the database connection is gone, then the lease and run repositories fail with an AppError, not a driver error', async () => {
    const ctx = await startContext(testConfig(infra.get(), {}), { connectToNats: false });
    const conn = await mongoose
      .createConnection(ctx.config.MONGO_URL, { bufferCommands: false })
      .asPromise();
    await ctx.close();
    await conn.close();
    for (const attempt of [
      () => createLeaseRepository(conn).acquire('x', 10_000),
      () => createRunRepository(conn).recent(),
    ]) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toMatch(/^DATABASE_(UNAVAILABLE|ERROR)$/);
    }
  });
});
