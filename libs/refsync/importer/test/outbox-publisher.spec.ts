import type { OutboxEvent } from '@nhp/refsync-sync';
import { createLogger } from '@nhp/shared-logger';
import { createOutboxPublisher } from '../src';

const logger = createLogger({ name: 'publisher-test', level: 'silent' });

function memoryOutbox(events: OutboxEvent[]) {
  let reads = 0;
  return {
    get reads() {
      return reads;
    },
    async pendingEvents() {
      reads += 1;
      return events.filter((e) => !e.publishedAt);
    },
    async markEventPublished(id: string) {
      const event = events.find((e) => e.id === id);
      if (!event || event.publishedAt) return false;
      event.publishedAt = new Date();
      return true;
    },
  };
}

const event = (id: string): OutboxEvent => ({
  id,
  subject: 'refsync.events.sync-completed',
  payload: { id },
  createdAt: new Date(),
  publishedAt: null,
});

describe('outbox publisher', () => {
  it('when NATS never connects, then publishUntilAcked retries until its time is up and reports the event pending', async () => {
    const outbox = memoryOutbox([event('e1')]);
    const publisher = createOutboxPublisher({
      outbox,
      nats: () => undefined,
      logger,
      baseDelayMs: 5,
      maxDelayMs: 20,
    });
    const summary = await publisher.publishUntilAcked(300);
    expect(summary).toMatchObject({ published: 0, pending: 1, error: 'NATS is not connected' });
    expect(outbox.reads).toBeGreaterThan(1); // it tried again, not once
  });

  it('when nothing is pending, then publishUntilAcked answers at once without an error', async () => {
    const publisher = createOutboxPublisher({
      outbox: memoryOutbox([]),
      nats: () => undefined,
      logger,
    });
    expect(await publisher.publishUntilAcked(60_000)).toEqual({
      published: 0,
      duplicates: 0,
      pending: 0,
    });
  });

  it('when the worker loop is kicked, then it looks at the outbox again before its interval is over, and stop() ends it', async () => {
    const outbox = memoryOutbox([]);
    const publisher = createOutboxPublisher({ outbox, nats: () => undefined, logger });
    publisher.start(3_600_000);
    await new Promise((resolve) => setImmediate(resolve));
    const before = outbox.reads;
    publisher.kick();
    for (let i = 0; i < 100 && outbox.reads === before; i++)
      await new Promise((resolve) => setImmediate(resolve));
    expect(outbox.reads).toBe(before + 1);
    await publisher.stop();
  });
});
