import { jetstreamManager } from '@nats-io/jetstream';
import { createLogger } from '@nhp/shared-logger';
import { connectNats, drainNats, type NatsConnection } from '@nhp/shared-messaging';
import { useTestInfra } from '@nhp/shared-testing';
import { createJetStreamPublisher, type OutboxMessage } from '../src';

const infra = useTestInfra();
const logger = createLogger({ name: 'jetstream-publisher-test', level: 'silent' });
const stream = {
  name: 'OUTBOX_TEST',
  subjects: ['outbox.test.>'],
  storage: 'memory' as const,
  duplicateWindowMs: 60_000,
  maxAgeMs: 60_000,
};

const message = (id: string): OutboxMessage => ({
  id,
  subject: 'outbox.test.happened',
  event: {
    specversion: '1.0',
    id,
    source: '/test',
    type: 'test.happened',
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { n: 1 },
  },
});

describe('JetStream publisher of an outbox', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connectNats({ servers: infra.get().natsUrl, name: 'outbox-test', logger });
  });
  afterAll(() => drainNats(nc));

  /** What the publisher reported to its observer, by event type. */
  function observed() {
    const seen = { published: [] as string[], failed: [] as string[] };
    return {
      seen,
      events: {
        published: (type: string) => seen.published.push(type),
        failed: (type: string) => seen.failed.push(type),
      },
    };
  }

  it('when an event is published twice, then the stream is ensured, keeps it once, and the second ack says duplicate', async () => {
    const { seen, events } = observed();
    const publisher = createJetStreamPublisher({ nats: () => nc, stream, logger, events });
    const first = await publisher.publish(message('m-1'));
    const second = await publisher.publish(message('m-1'));
    expect(first).toMatchObject({ stream: 'OUTBOX_TEST', duplicate: false });
    expect(second).toEqual({ ...first, duplicate: true });
    // The repeat the stream dropped is not a second publication.
    expect(seen).toEqual({ published: ['test.happened'], failed: [] });
    const info = await (await jetstreamManager(nc)).streams.info('OUTBOX_TEST');
    expect(info.state.messages).toBe(1);
    const stored = await (
      await jetstreamManager(nc)
    ).streams.getMessage('OUTBOX_TEST', {
      seq: first.seq,
    });
    expect(stored?.header.get('Nats-Msg-Id')).toBe('m-1');
    expect(stored?.header.get('Content-Type')).toBe('application/cloudevents+json');
  });

  it('when there is no NATS connection, then a publish fails saying so', async () => {
    const { seen, events } = observed();
    const publisher = createJetStreamPublisher({ nats: () => undefined, stream, logger, events });
    await expect(publisher.publish(message('m-2'))).rejects.toThrow('NATS is not connected');
    expect(seen).toEqual({ published: [], failed: ['test.happened'] });
  });
});
