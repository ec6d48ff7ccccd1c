import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/transport-node';

/** Keys that can be claimed once across every instance, each for a limited time. */
export interface OnceStore {
  /** true when this call claimed `key` first; false when it was claimed before (within the TTL). */
  claim(key: string): Promise<boolean>;
}

export interface OpenOnceStoreOptions {
  /** JetStream key-value bucket name (letters, digits, `-`, `_`). */
  bucket: string;
  /** How long a claim is remembered (the bucket's max age). */
  ttlMs: number;
  /** Copies in a cluster (NATS_STREAM_REPLICAS). */
  replicas: number;
}

/**
 * A JetStream key-value bucket used as a set of one-time claims: `claim` is the bucket's atomic
 * create-if-absent (a put expecting no previous revision), so of several instances claiming one key
 * at once exactly one wins; entries expire with the bucket's max age. Opening creates the bucket,
 * or brings an existing one to the replica count in place (its entries stay).
 */
export async function openOnceStore(
  nc: NatsConnection,
  options: OpenOnceStoreOptions,
): Promise<OnceStore> {
  const kv = await new Kvm(nc).create(options.bucket, {
    history: 1,
    ttl: options.ttlMs,
    replicas: options.replicas,
  });
  const status = await kv.status();
  if (status.replicas !== options.replicas || status.ttl !== options.ttlMs) {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.update(status.streamInfo.config.name, {
      num_replicas: options.replicas,
      max_age: nanos(options.ttlMs),
    });
  }
  return {
    async claim(key) {
      try {
        await kv.create(key, new Uint8Array(0));
        return true;
      } catch (err) {
        if (
          err instanceof JetStreamApiError &&
          err.code === JetStreamApiCodes.StreamWrongLastSequence
        ) {
          return false;
        }
        throw err;
      }
    },
  };
}

/**
 * A OnceStore over a connection that may not exist yet or may be down: opened on first use (and
 * again after a failure); while NATS is not connected every claim fails at once, so the caller
 * can refuse instead of accepting what it cannot check.
 */
export function lazyOnceStore(
  nats: () => NatsConnection | undefined,
  isConnected: (nc: NatsConnection | undefined) => boolean,
  options: OpenOnceStoreOptions,
): OnceStore & { open(): Promise<void> } {
  let opening: Promise<OnceStore> | undefined;
  const store = (): Promise<OnceStore> => {
    const nc = nats();
    if (!nc || !isConnected(nc)) return Promise.reject(new Error('NATS is not connected'));
    opening ??= openOnceStore(nc, options).catch((err: unknown) => {
      opening = undefined;
      throw err;
    });
    return opening;
  };
  return {
    async open() {
      await store();
    },
    async claim(key) {
      return (await store()).claim(key);
    },
  };
}
