import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  StorageType,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  REFSYNC_STREAM,
  SYNC_COMPLETED_SUBJECT,
  type SyncCompletedEventData,
} from '@nhp/refsync-contracts';
import { refsyncModels, syncCompletedEvent } from '@nhp/refsync-data-access';
import { publishCloudEvent, type CloudEvent } from '@nhp/shared-messaging';
import { AsyncApiContract, useTestInfra } from '@nhp/shared-testing';
import type { ImporterContext } from '../src/context';
import {
  eventually,
  rg,
  startContext,
  testConfig,
  tg,
  upstreamDir,
  writeUpstream,
} from './helpers';

const infra = useTestInfra();
/**
 * The events' contract as the repository holds it (docs/asyncapi, what downstream teams generate
 * their models from): every event captured from nats-server must fit it, headers and payload.
 */
const contract = AsyncApiContract.fromFile('docs/asyncapi/refsync-importer.json');

/** The ids of every message the stream holds, oldest first. */
async function streamEventIds(nc: NatsConnection): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(REFSYNC_STREAM);
  const out: string[] = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
    const msg = await jsm.streams.getMessage(REFSYNC_STREAM, { seq }).catch(() => null);
    if (!msg) continue;
    const headers = Object.fromEntries([...msg.header.keys()].map((k) => [k, msg.header.get(k)]));
    expect(contract.problems({ subject: msg.subject, headers, payload: msg.json() })).toEqual([]);
    out.push((msg.json() as { id: string }).id);
  }
  return out;
}

describe('sync-completed events on NATS JetStream', () => {
  let files: Awaited<ReturnType<typeof upstreamDir>>;
  let ctx: ImporterContext;
  let observer: NatsConnection;
  let treatment = [tg('T1'), tg('T2'), tg('T3'), tg('T4'), tg('T5')];
  const received: Array<CloudEvent<SyncCompletedEventData>> = [];
  /** What the subscription found wrong with the events it received, checked after each test. */
  const problems: string[] = [];
  afterEach(() => {
    expect(problems.splice(0)).toEqual([]);
  });

  beforeAll(async () => {
    files = await upstreamDir();
    const env = {
      REFSYNC_SOURCE_TREATMENT_GROUP: await writeUpstream(files.dir, 'tg.json', treatment),
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: await writeUpstream(files.dir, 'rg.json', [
        rg('R1'),
        rg('R2'),
      ]),
    };
    // One importer and database for the file: event ids follow the version, and versions only grow.
    ctx = await startContext(testConfig(infra.get(), env));
    ctx.publisher.start(100);
    observer = await connect({
      servers: infra.get().natsUrl,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
    });
    observer.subscribe(SYNC_COMPLETED_SUBJECT, {
      callback: (_err, msg) => {
        received.push(syncCompletedEvent.parse(msg.data));
        expect(msg.headers?.get('Content-Type')).toBe('application/cloudevents+json');
        const headers = Object.fromEntries(
          [...(msg.headers?.keys() ?? [])].map((k) => [k, msg.headers?.get(k) ?? '']),
        );
        problems.push(...contract.problems({ subject: msg.subject, headers, payload: msg.json() }));
      },
    });
    await observer.flush();
  });
  afterAll(async () => {
    await observer?.close();
    await ctx?.close();
    await files?.cleanup();
  });

  const changeTreatment = async (items: ReturnType<typeof tg>[]) => {
    treatment = items;
    await writeUpstream(files.dir, 'tg.json', items);
  };

  it('when a run commits, then one sync-completed CloudEvent with the counts arrives and the stream is provisioned as specified', async () => {
    const before = (await ctx.writeRepo.readState()).version;
    await changeTreatment([...treatment, tg(`N${before}`)]);
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report.outcome).toBe('committed');
    const id = `refsync-sync-completed-${before + 1}`;
    const event = await eventually(() => received.find((e) => e.id === id), `event ${id}`);
    expect(event).toMatchObject({
      specversion: '1.0',
      type: 'no.nhp.refsync.sync-completed.v1',
      source: '/nhp/refsync-importer',
      datacontenttype: 'application/json',
      data: {
        runId: report.runId,
        previousVersion: before,
        currentVersion: before + 1,
        changed: true,
        datasets: {
          treatmentGroup: {
            added: before === 0 ? treatment.length : 1,
            updated: 0,
            deleted: 0,
            total: treatment.length,
          },
          reimbursementGroup: { added: before === 0 ? 2 : 0, updated: 0, deleted: 0, total: 2 },
        },
      },
    });
    await eventually(
      async () => (await ctx.writeRepo.pendingEvents()).length === 0,
      'the outbox to drain',
    );
    expect((await streamEventIds(observer)).filter((e) => e === id)).toEqual([id]);

    const info = await (await jetstreamManager(observer)).streams.info(REFSYNC_STREAM);
    expect(info.config.storage).toBe(StorageType.File);
    expect(info.config.subjects).toContain('refsync.events.>');
    expect(info.config.duplicate_window).toBeGreaterThanOrEqual(120 * 1e9);
    expect(info.config.max_age).toBe(30 * 24 * 3600 * 1e9);
  });

  it('when a downstream service uses a durable consumer as the README shows, then it receives the events and they stay acknowledged', async () => {
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(['committed', 'unchanged']).toContain(report.outcome);
    await eventually(
      async () => (await ctx.writeRepo.pendingEvents()).length === 0,
      'the outbox to drain',
    );
    const jsm = await jetstreamManager(observer);
    await jsm.consumers.add(REFSYNC_STREAM, {
      durable_name: 'readme-example',
      filter_subject: SYNC_COMPLETED_SUBJECT,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const consumer = await jetstream(observer).consumers.get(REFSYNC_STREAM, 'readme-example');
    const expected = (await streamEventIds(observer)).length;
    const seen: string[] = [];
    const messages = await consumer.fetch({ max_messages: expected, expires: 5000 });
    for await (const msg of messages) {
      seen.push(msg.json<{ id: string }>().id);
      msg.ack();
    }
    expect(seen).toEqual(await streamEventIds(observer));
    expect((await jsm.consumers.info(REFSYNC_STREAM, 'readme-example')).num_pending).toBe(0);
  });

  it('when a run finds nothing to commit, then an event with zero counts and its own id is published', async () => {
    await ctx.importer.run({ trigger: 'cli' }); // make sure the current upstream is committed
    const version = (await ctx.writeRepo.readState()).version;
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report.outcome).toBe('unchanged');
    const id = `refsync-sync-completed-${version}-unchanged-${report.runId}`;
    const event = await eventually(() => received.find((e) => e.id === id), `event ${id}`);
    expect(event.data).toMatchObject({
      changed: false,
      previousVersion: version,
      currentVersion: version,
      datasets: { treatmentGroup: { added: 0, updated: 0, deleted: 0, total: treatment.length } },
    });
  });

  it('when NATS is down during a run, then the version commits, the event is published once NATS is back, and a re-publish is de-duplicated', async () => {
    const before = (await ctx.writeRepo.readState()).version;
    await infra.get().stopNats();
    try {
      await changeTreatment([...treatment, tg(`Offline${before}`)]);
      const report = await ctx.importer.run({ trigger: 'cli' });
      expect(report).toMatchObject({ outcome: 'committed', committedVersion: before + 1 });
      const pending = await ctx.writeRepo.pendingEvents();
      expect(pending.map((e) => e.id)).toEqual([`refsync-sync-completed-${before + 1}`]);
    } finally {
      await infra.get().startNats();
    }
    const id = `refsync-sync-completed-${before + 1}`;
    await eventually(
      async () => (await ctx.writeRepo.pendingEvents()).length === 0,
      'the event to be published after NATS is back',
      30_000,
    );
    await eventually(
      async () => (await streamEventIds(observer)).includes(id),
      `${id} in the stream`,
      30_000,
    );

    // The same event published again (as after a crash between the ack and marking it sent).
    const stored = await findOutboxEvent(ctx, id);
    expect(stored.publishedAt).toBeInstanceOf(Date);
    const ack = await publishCloudEvent(
      observer,
      SYNC_COMPLETED_SUBJECT,
      stored.payload as CloudEvent,
      { msgId: stored.id },
    );
    expect(ack.duplicate).toBe(true);
    expect((await streamEventIds(observer)).filter((e) => e === id)).toEqual([id]);
  }, 60_000);
});

async function findOutboxEvent(ctx: ImporterContext, id: string) {
  const { State } = refsyncModels(ctx.conn);
  const state = await State.findById('refsync').lean();
  const event = state?.outbox.find((e) => e.id === id);
  if (!event) throw new Error(`no outbox event ${id}`);
  return event;
}
