/**
 * A write in flight when the database goes away is answered "the database cannot be reached"
 * (EPVK-100503, retry later), never as a server error (EPVK-100500). The database (the project's
 * server, as a process with a data file) is stopped in the middle of a burst of sets from 16
 * clients, alternately cleanly (SIGTERM: the server closes every connection, so the sets in
 * flight lose theirs) and by a crash (SIGKILL), and started again, 6 times. Each set's answer is
 * kept; none may be a 500 other than EPVK-100503.
 *
 * The sets' writes include the outbox's batched pointer write (`journal.register`, one unordered
 * bulkWrite for the pointers of every set of a turn): when its connection closes, the driver
 * throws a MongoBulkWriteError that carries the network error only as its `errorResponse`, which
 * the translation once answered EPVK-100500.
 */
import { syntheticFnr } from '@nhp/privacy-testing';
import { waitFor } from '@nhp/shared-testing';
import { seededRandom, sleep, startInfrastructure, useCleanup, type Answer } from './support/fault';
import { startPrivacyStack } from './support/privacy';

const cleanup = useCleanup();
const STOPS = 6;
const CLIENTS = 16;

describe('when the database stops under a burst of sets', () => {
  it('then every set that fails is answered EPVK-100503 and none EPVK-100500', async () => {
    const infrastructure = await startInfrastructure(cleanup);
    const { mongo } = infrastructure;
    const { privacy } = await startPrivacyStack(cleanup, infrastructure);
    const random = seededRandom('privacy-api, database stops under sets');

    const failures = new Map<string, number>();
    let acked = 0;
    let running = true;
    const count = (answer: Answer | undefined): void => {
      if (answer?.status === 200) {
        acked++;
        return;
      }
      // A refused connection or a timeout is not the API's answer; only its answers count here.
      if (!answer) return;
      const key = `${answer.status} ${JSON.stringify(answer.body)}`;
      failures.set(key, (failures.get(key) ?? 0) + 1);
    };
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      for (let n = 0; running; n++) {
        const fnr = syntheticFnr(60_000 + client * 50 + (n % 50));
        count(await privacy.set(fnr, n % 2 === 0, 10_000).catch(() => undefined));
      }
    });

    try {
      for (let stop = 0; stop < STOPS; stop++) {
        // Sets flowing again after the last start, then the stop at a random moment of the burst.
        const before = acked;
        await waitFor('sets to be acknowledged', () => acked >= before + 50, {
          timeoutMs: 30_000,
          intervalMs: 20,
        });
        await sleep(random.next() * 200);
        await mongo.kill(stop % 2 === 0 ? 'SIGTERM' : 'SIGKILL');
        await sleep(300);
        cleanup.signal.throwIfAborted();
        await mongo.restart();
      }
    } finally {
      running = false;
      await Promise.all(clients);
    }

    const answered = [...failures.entries()].map(([k, n]) => `${n} x ${k}`).join('\n');
    process.stdout.write(`database stops under sets: ${acked} sets answered 200\n${answered}\n`);
    expect([...failures.keys()].filter((k) => k.includes('EPVK-100500'))).toEqual([]);
    // Every failure the API answered is the retryable one.
    expect([...failures.keys()].filter((k) => !k.includes('EPVK-100503'))).toEqual([]);
  });
});
