// Benchmark of npm run privacy-mirror's catch-up: how many changes a second a mirror that was
// stopped applies when it resumes. The stack runs as processes (privacy-api, nats-server, the
// development issuer, the MongoDB-compatible server, as the mirror's test). The baseline, measured
// in the same run on the same events: a bare JetStream pull consumer that fetches and
// acknowledges them and does nothing else, so the ratio says what applying, saving the JSON store
// and acknowledging after the save cost on top of receiving.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createPrivacyClient, type PrivacyClient } from '@nhp/privacy-client';
import { PRIVACY_EVENTS_STREAM, settingChangedSubject } from '@nhp/privacy-contracts';
import { startPrivacyStack, type PrivacyStack } from '@nhp/privacy-dev-issuer';
import { JsonFileMirrorStore, runPrivacyMirror } from '@nhp/privacy-mirror';
import { syntheticFnr } from '@nhp/privacy-testing';

const CHANGES = Number(process.env['MIRROR_BENCH_CHANGES'] ?? 5000);
const CITIZENS = 1000;
const ROUNDS = 3;
const SAMTYKKE = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01';

const say = (line: string) => process.stdout.write(`${line}\n`);

async function clientFor(stack: PrivacyStack, scopes: Array<'read' | 'write' | 'admin'>) {
  const clientId = `bench-${randomUUID().slice(0, 8)}`;
  const { privateJwk } = await stack.register({ clientId, scopes });
  const client: PrivacyClient = createPrivacyClient({
    baseUrl: stack.apiUrl,
    validateResponses: false,
    auth: { issuer: stack.issuerUrl, clientId, privateKey: privateJwk, scopes },
  });
  return { client, clientId };
}

/** Fetches and acknowledges every event of the subject through a new consumer; events a second. */
async function bareConsumerRate(
  natsUrl: string,
  subject: string,
  expected: number,
): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const name = `bench-bare-${randomUUID().slice(0, 8)}`;
    await jsm.consumers.add(PRIVACY_EVENTS_STREAM, {
      durable_name: name,
      filter_subject: subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      max_ack_pending: 10_000,
    });
    const consumer = await jetstream(nc).consumers.get(PRIVACY_EVENTS_STREAM, name);
    const start = performance.now();
    let received = 0;
    while (received < expected) {
      const batch = await consumer.fetch({
        max_messages: Math.min(500, expected - received),
        expires: 1000,
      });
      for await (const m of batch) {
        JSON.parse(m.string());
        m.ack();
        received += 1;
      }
    }
    await nc.flush();
    const seconds = (performance.now() - start) / 1000;
    await jsm.consumers.delete(PRIVACY_EVENTS_STREAM, name);
    return received / seconds;
  } finally {
    await nc.close();
  }
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-mirror-'));
  const stack = await startPrivacyStack();
  try {
    const { client: admin } = await clientFor(stack, ['admin']);
    const mirrorRates: number[] = [];
    const bareRates: number[] = [];
    say(
      `privacy-mirror catch-up: ${CHANGES} changes across ${CITIZENS} citizens, ${ROUNDS} rounds, medians`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      const partKode = `bench-${randomUUID().slice(0, 8)}`;
      const definisjonGuid = randomUUID();
      await admin.opprettPart({ partKode });
      await admin.opprettInnstillingDefinisjon({
        definisjonMalGuid: SAMTYKKE,
        definisjonGuid,
        partKode,
        replikering: true,
      });
      const store = new JsonFileMirrorStore(join(dir, `${partKode}.json`));
      const mirror = (once: boolean) =>
        runPrivacyMirror({
          client: admin,
          api: stack.apiUrl,
          nats: stack.nats.url,
          partKode,
          store,
          once,
        });
      // The first walk (nothing yet) makes the consumer; the mirror then stays stopped.
      await mirror(true);
      // Each change flips one citizen's setting, so every one is `endret` and makes an event.
      const state = new Map<string, boolean>();
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < CHANGES) {
            const i = next++;
            const innbyggerFnr = syntheticFnr(5000 + (i % CITIZENS));
            // Consecutive changes of one citizen are CITIZENS apart, never in flight together.
            const aktiv = !(state.get(innbyggerFnr) ?? false);
            state.set(innbyggerFnr, aktiv);
            await admin.settInnbyggersPersonvernInnstilling({
              innbyggerFnr,
              definisjonGuid,
              partKode,
              aktiv,
            });
          }
        }),
      );
      const subject = settingChangedSubject(partKode);
      const nc = await connect({ servers: stack.nats.url });
      const jsm = await jetstreamManager(nc);
      for (;;) {
        const info = await jsm.streams.info(PRIVACY_EVENTS_STREAM, { subjects_filter: subject });
        if ((info.state.subjects?.[subject] ?? 0) >= CHANGES) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await nc.close();

      const start = performance.now();
      const summary = await mirror(true);
      const seconds = (performance.now() - start) / 1000;
      mirrorRates.push(summary.applied / seconds);
      bareRates.push(await bareConsumerRate(stack.nats.url, subject, CHANGES));
      say(
        `  round ${round + 1}: mirror ${summary.applied} changes in ${seconds.toFixed(2)} s = ${(summary.applied / seconds).toFixed(0)} changes/s; bare consumer ${bareRates[round]?.toFixed(0)} events/s`,
      );
    }
    const median = (xs: number[]) =>
      [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const ratios = mirrorRates.map((r, i) => r / (bareRates[i] as number));
    say(`  privacy-mirror catch-up: ${median(mirrorRates).toFixed(0)} changes/s (median)`);
    say(`  bare JetStream fetch + ack: ${median(bareRates).toFixed(0)} events/s (median)`);
    say(`  ratio mirror / bare (median of the rounds): ${median(ratios).toFixed(2)}`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
