/**
 * After a privacy-api instance crashes, the changes it acknowledged but did not publish are
 * published by another instance soon, not a minute later: of two instances sharing the database
 * and NATS, one is killed (SIGKILL) in the middle of a burst of sets, with NATS frozen (SIGSTOP)
 * for a moment before, so that it certainly leaves acknowledged changes unpublished. Every change
 * acknowledged before the kill must then be relayed (its event published and its entry settled)
 * within 15 s of the kill.
 *
 * Before the burst, clients send sets of the same citizens at once, as clients that retry or
 * replay do: the writes that lose such a race are not made. Each had registered its journal
 * pointer first, and those pointers used to stay until stale (60 s), the oldest in the table; a
 * sweep read only the oldest 500 pointers, so behind 500 of them the entries the dead instance
 * left were not swept until the pointers went stale: 40-58 s late (issue 34, item 7).
 *
 * Why 15 s: the survivor sweeps the journal every 5 s (the journal's default), so an entry the
 * dead instance left waits at most one interval for a sweep that relays it; three intervals leave
 * room for the sweep running at the kill and for a loaded 2-core machine, and stay well under the
 * 60 s stale age that the old behaviour needed.
 */
import { MongoClient } from 'mongodb';
import { syntheticFnr } from '@nhp/privacy-testing';
import { lastLines, seededRandom, sleep, startInfrastructure, useCleanup } from './support/fault';
import { startTwoPrivacyInstances } from './support/privacy';
import { runSetBurst } from './support/set-burst';

const cleanup = useCleanup();
const RELAYED_WITHIN_MS = 15_000;

describe('when a privacy-api instance is killed with acknowledged changes not yet published', () => {
  it('then the other instance publishes every one of them within 15 s', async () => {
    const infrastructure = await startInfrastructure(cleanup);
    const { mongoUri, nats } = infrastructure;
    const { doomed, survivor, viaDoomed, viaSurvivor } = await startTwoPrivacyInstances(
      cleanup,
      infrastructure,
    );
    const client = cleanup.add(new MongoClient(mongoUri), (c) => c.close());
    const settings = client.db().collection('privacy_settings');
    const random = seededRandom('privacy-api, late events');

    // The races: 60 citizens, 10 sets of each at once (four citizens at a time); about four
    // writes lose for every set, each once leaving a pointer to a write that never happened.
    const racing = Array.from({ length: 60 }, (_, i) => syntheticFnr(69_000 + i));
    for (let i = 0; i < racing.length; i += 4) {
      await Promise.all(
        racing
          .slice(i, i + 4)
          .flatMap((fnr) =>
            Array.from({ length: 10 }, (_, k) =>
              (k % 2 === 0 ? viaDoomed : viaSurvivor).set(fnr, k % 2 === 0, 10_000),
            ),
          ),
      );
    }
    const pointersAfterRaces = await client
      .db()
      .collection('privacy_journal_pending')
      .countDocuments({});

    const CITIZENS = 150;
    const SETS = 4;
    const citizens = Array.from({ length: CITIZENS }, (_, i) => syntheticFnr(70_000 + i));
    const killAfter = Math.round(CITIZENS * SETS * (0.2 + random.next() * 0.3));
    let answered = 0;
    let dead = false;
    let killed: Promise<unknown> | undefined;
    // Entries written before `before` that are still pending: changes not yet relayed.
    const leftOver = (before: Date) =>
      settings.countDocuments({
        definisjonGuid: viaDoomed.definisjonGuid,
        journal: { $elemMatch: { at: { $lte: before } } },
      });
    // From the kill on, beside the burst: how long until nothing acknowledged before it is pending.
    let watched: Promise<{ atKill: number; left: number; drainedAfterMs: number }> | undefined;
    const watch = async (killedAt: Date) => {
      const atKill = await leftOver(killedAt);
      let left = atKill;
      while (left > 0 && Date.now() - killedAt.getTime() < RELAYED_WITHIN_MS) {
        await sleep(200);
        left = await leftOver(killedAt);
      }
      return { atKill, left, drainedAfterMs: Date.now() - killedAt.getTime() };
    };
    const crash = async () => {
      const natsPid = nats.pid as number;
      process.kill(natsPid, 'SIGSTOP');
      try {
        await sleep(300);
        dead = true;
        await doomed.kill('SIGKILL');
      } finally {
        process.kill(natsPid, 'SIGCONT');
      }
      watched = watch(new Date());
    };
    await runSetBurst({
      citizens,
      sets: SETS,
      clients: 16,
      clientFor: (i) => (!dead && i % 2 === 0 ? viaDoomed : viaSurvivor),
      onAcked: () => {
        if (++answered === killAfter) killed = crash();
      },
    });
    await killed;
    const outcome = await (watched as NonNullable<typeof watched>);
    process.stdout.write(
      `privacy-api, late events: ${pointersAfterRaces} journal pointers left after the races; killed after ${killAfter} answers; ${outcome.atKill} documents pending at the kill, ${outcome.left} still ${(outcome.drainedAfterMs / 1000).toFixed(1)} s after it\n`,
    );
    // The dead instance certainly left acknowledged changes unpublished (NATS was frozen).
    expect(outcome.atKill).toBeGreaterThan(0);
    let late = '';
    if (outcome.left > 0) {
      // What is left, for the message: each entry with whether its pointer is still there, and
      // when (if within a minute) the last of them was relayed after all.
      const killedAt = new Date(Date.now() - outcome.drainedAfterMs);
      const docs = await settings
        .find({
          definisjonGuid: viaDoomed.definisjonGuid,
          journal: { $elemMatch: { at: { $lte: killedAt } } },
        })
        .toArray();
      const pointers = client.db().collection('privacy_journal_pending');
      const entries: string[] = [];
      for (const doc of docs) {
        for (const e of doc['journal'] as Array<{ id: string; at: Date }>) {
          const pointer = await pointers.findOne({ _id: e.id as never });
          entries.push(
            `${e.id} at ${e.at.toISOString()} pointer ${pointer ? 'present' : 'MISSING'}`,
          );
        }
      }
      const started = Date.now();
      while ((await leftOver(killedAt)) > 0 && Date.now() - started < 60_000) await sleep(500);
      const drained = (await leftOver(killedAt)) === 0;
      late = `${outcome.left} documents still pending at ${RELAYED_WITHIN_MS / 1000} s (kill at ${killedAt.toISOString()}): ${entries.join('; ')}; ${drained ? `all relayed ${((Date.now() - killedAt.getTime()) / 1000).toFixed(1)} s after the kill` : 'still pending a minute later'}\n${lastLines(survivor)}`;
    }
    expect(late).toBe('');
  });
});
