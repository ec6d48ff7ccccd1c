import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

export interface StoredMessage<T = unknown> {
  seq: number;
  subject: string;
  /** The Nats-Msg-Id header (JetStream's de-duplication key). */
  msgId: string | undefined;
  body: T;
}

/** Every message a JetStream stream holds, in order (an ordered consumer, then gone). */
export async function readStream<T = unknown>(
  natsUrl: string,
  stream: string,
): Promise<Array<StoredMessage<T>>> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream).catch(() => undefined);
    if (!info || info.state.messages === 0) return [];
    const last = info.state.last_seq;
    const consumer = await jetstream(nc).consumers.get(stream);
    const out: Array<StoredMessage<T>> = [];
    let seq = 0;
    while (seq < last) {
      const batch = await consumer.fetch({ max_messages: 1000, expires: 2000 });
      let got = 0;
      for await (const msg of batch) {
        got++;
        seq = msg.seq;
        out.push({
          seq,
          subject: msg.subject,
          msgId: msg.headers?.get('Nats-Msg-Id') || undefined,
          body: msg.json<T>(),
        });
      }
      if (got === 0) break;
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Values that occur more than once, with their counts. */
export function duplicates(values: Iterable<string>): Record<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return Object.fromEntries([...counts].filter(([, n]) => n > 1));
}
