/**
 * Acknowledged writes survive a crash of privacy-api itself: of two instances sharing the database
 * and NATS (as behind a load balancer), one is killed (SIGKILL) at a random moment of a burst of
 * sets, with NATS frozen for that moment, so that its writes are cut anywhere between the journal
 * pointer, the write that carries the entry, the relay's audit record, the publish and the settle,
 * and some acknowledged changes are certainly left unpublished. The other instance takes the rest
 * of the load, and its sweeper finishes what the dead one left: every set answered
 * `endret` is stored whole, and every stored change gets exactly one event and one audit record.
 * Then the killed instance is started again and serves the same state.
 */
import { syntheticFnr } from '@nhp/privacy-testing';
import { waitFor } from '@nhp/shared-testing';
import { seededRandom, sleep, startInfrastructure, useCleanup } from './support/fault';
import {
  privacyClient,
  startPrivacyApi,
  startTwoPrivacyInstances,
  type PrivacyClient,
} from './support/privacy';
import { changesAcked, expectBurstStoredWhole, runSetBurst } from './support/set-burst';

const cleanup = useCleanup();

describe('when a privacy-api instance is killed in the middle of a burst of writes', () => {
  it('then the other instance relays what it left, and every acknowledged change is stored whole with one event', async () => {
    const infrastructure = await startInfrastructure(cleanup);
    const { mongoUri, nats } = infrastructure;
    const { issuer, env, doomed, survivor, viaDoomed, viaSurvivor } =
      await startTwoPrivacyInstances(cleanup, infrastructure);
    const random = seededRandom('privacy-api, instance crash');

    // 300 citizens, 4 sets each, 16 clients; a citizen taken up while the doomed instance lives is
    // sent to it or to the survivor in turn, and to the survivor once it is dead (as a load
    // balancer would). After a random share of all answers, NATS is frozen (SIGSTOP) for a moment,
    // so that the changes the doomed instance acknowledges then cannot be published yet, and the
    // doomed instance is killed: what it leaves in its journal is certain, not left to chance.
    const CITIZENS = 300;
    const SETS = 4;
    const citizens = Array.from({ length: CITIZENS }, (_, i) => syntheticFnr(60_000 + i));
    const killAfter = Math.round(CITIZENS * SETS * (0.15 + random.next() * 0.35));
    let answered = 0;
    let frozen = false;
    let answeredWhileFrozen = 0;
    let killed: Promise<unknown> | undefined;
    let dead = false;
    const doomedClient: PrivacyClient = {
      ...viaDoomed,
      async set(fnr, aktiv, timeoutMs) {
        const answer = await viaDoomed.set(fnr, aktiv, timeoutMs);
        if (frozen && answer.status === 200) answeredWhileFrozen++;
        return answer;
      },
    };
    const crash = async () => {
      const natsPid = nats.pid as number;
      process.kill(natsPid, 'SIGSTOP');
      frozen = true;
      try {
        await sleep(300);
        // From here on, citizens taken up go to the survivor (the signal is sent at once).
        dead = true;
        await doomed.kill('SIGKILL');
      } finally {
        frozen = false;
        process.kill(natsPid, 'SIGCONT');
      }
    };
    const burst = await runSetBurst({
      citizens,
      sets: SETS,
      clients: 16,
      clientFor: (i) => (!dead && i % 2 === 0 ? doomedClient : viaSurvivor),
      onAcked: () => {
        if (++answered === killAfter) killed = crash();
      },
    });
    expect(killed).toBeDefined();
    await killed;
    cleanup.signal.throwIfAborted();

    process.stdout.write(
      `privacy-api, instance crash: killed after ${killAfter} answers; ${changesAcked(burst)} acknowledged changes, ${answeredWhileFrozen} answered by it while NATS was frozen, ${burst.unanswered.size} sets unanswered\n`,
    );
    // The doomed instance left acknowledged changes unpublished; the crash did cut the burst, and
    // only the doomed instance's citizens: the survivor answered every set sent to it.
    expect(answeredWhileFrozen).toBeGreaterThan(0);
    expect(burst.unanswered.size).toBeGreaterThan(0);
    expect(burst.unanswered.size).toBeLessThanOrEqual(16);

    await expectBurstStoredWhole({
      burst,
      citizens,
      privacy: viaSurvivor,
      mongoUri,
      natsUrl: nats.url,
      logOf: survivor,
    });

    // The killed instance, started again, serves the same state.
    const restarted = cleanup.add(await startPrivacyApi(env), (a) => a.stop());
    const viaRestarted = await privacyClient(restarted, issuer.issuer, viaDoomed);
    const sample = citizens.filter((_, i) => i % 15 === 0);
    await waitFor('the restarted instance to serve', async () => {
      const answer = await viaRestarted.status(sample[0] as string, 2000).catch(() => undefined);
      return answer?.status === 200;
    });
    for (const fnr of sample) {
      const [a, b] = await Promise.all([viaRestarted.status(fnr), viaSurvivor.status(fnr)]);
      expect({ fnr, status: a.status, body: a.body }).toEqual({ fnr, status: 200, body: b.body });
    }
  });
});
