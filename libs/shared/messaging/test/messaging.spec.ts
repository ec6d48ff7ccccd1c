import { jetstreamManager } from '@nats-io/jetstream';
import { startNatsServer, type NatsServerProcess } from '@nhp/shared-testing';
import pino from 'pino';
import { z } from 'zod';
import {
  CLOUDEVENTS_CONTENT_TYPE,
  connectNats,
  defineEvent,
  drainNats,
  ensureStream,
  natsIsConnected,
  onNatsReconnect,
  publishCloudEvent,
  subscribeCloudEvents,
  type NatsConnection,
} from '../src';

const logger = pino({ level: 'silent' });
const pingDef = defineEvent({
  type: 'test.ping.v1',
  source: '/tests/messaging',
  dataSchema: z.object({ n: z.number().int() }).strict(),
});
const stream = {
  name: 'TEST_EVENTS',
  subjects: ['test.events.>'],
  storage: 'file' as const,
  duplicateWindowMs: 120_000,
  maxAgeMs: 86_400_000,
};

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('shared messaging against a real nats-server', () => {
  let server: NatsServerProcess;
  let nc: NatsConnection;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({
      servers: server.url,
      name: 'messaging-spec',
      logger,
      reconnectTimeWaitMs: 100,
    });
  });
  afterAll(async () => {
    await drainNats(nc);
    await server.dispose();
  });

  it('when the stream is ensured twice, then the second call converges without error', async () => {
    await ensureStream(nc, stream);
    const info = await ensureStream(nc, { ...stream, maxAgeMs: 2 * 86_400_000 });
    expect(info.config.max_age).toBe(2 * 86_400_000 * 1_000_000);
    expect(info.config.duplicate_window).toBe(120_000 * 1_000_000);
  });

  it('when the same event is published twice, then the stream keeps one message with CloudEvents headers', async () => {
    await ensureStream(nc, stream);
    const event = pingDef.build({ n: 1 }, { id: 'ping-1' });
    const first = await publishCloudEvent(nc, 'test.events.ping', event, { eventDef: pingDef });
    const second = await publishCloudEvent(nc, 'test.events.ping', event);
    expect(first.duplicate).toBe(false);
    expect(second.duplicate).toBe(true);

    const jsm = await jetstreamManager(nc);
    const msg = await jsm.streams.getMessage(stream.name, { last_by_subj: 'test.events.ping' });
    expect(msg?.header.get('Content-Type')).toBe(CLOUDEVENTS_CONTENT_TYPE);
    expect(msg?.header.get('Nats-Msg-Id')).toBe('ping-1');
    expect(pingDef.parse(msg?.data)).toMatchObject({
      specversion: '1.0',
      id: 'ping-1',
      data: { n: 1 },
    });
    const info = await jsm.streams.info(stream.name);
    expect(info.state.messages).toBe(1);
  });

  it('when event data does not match its schema, then building or publishing it throws', async () => {
    expect(() => pingDef.build({ n: 1.5 }, { id: 'bad' })).toThrow();
    const forged = { ...pingDef.build({ n: 2 }, { id: 'forged' }), data: { n: 'x' } };
    await expect(
      publishCloudEvent(nc, 'test.events.ping', forged, { eventDef: pingDef }),
    ).rejects.toThrow();
  });

  it('when a subscriber receives valid and invalid events, then only valid ones reach the handler', async () => {
    const received: number[] = [];
    const sub = subscribeCloudEvents(
      nc,
      'test.plain',
      pingDef,
      (e) => {
        received.push(e.data.n);
      },
      logger,
    );
    nc.publish('test.plain', 'not json');
    nc.publish(
      'test.plain',
      JSON.stringify({ ...pingDef.build({ n: 3 }, { id: 'x' }), data: { n: 'three' } }),
    );
    nc.publish('test.plain', JSON.stringify(pingDef.build({ n: 4 }, { id: 'y' })));
    await nc.flush();
    await waitFor(() => received.length > 0, 'the valid event');
    expect(received).toEqual([4]);
    sub.unsubscribe();
  });

  it('when the server goes away and comes back, then the connection state follows and each reconnect listener is called once', async () => {
    let calls = 0;
    let removedCalls = 0;
    onNatsReconnect(nc, () => calls++);
    const remove = onNatsReconnect(nc, () => removedCalls++);
    onNatsReconnect(nc, () => {
      throw new Error('a failing listener does not stop the others');
    });
    remove();
    expect(natsIsConnected(nc)).toBe(true);
    await server.stop();
    await waitFor(() => !natsIsConnected(nc), 'disconnect');
    expect(calls).toBe(0);
    await server.restart();
    await waitFor(() => natsIsConnected(nc), 'reconnect');
    await waitFor(() => calls === 1, 'the reconnect listener');
    expect(removedCalls).toBe(0);
  });
});
