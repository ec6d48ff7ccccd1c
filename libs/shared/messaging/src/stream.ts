import { nanos, type NatsConnection } from '@nats-io/transport-node';
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstreamManager,
  StorageType,
  type StreamInfo,
} from '@nats-io/jetstream';

export interface StreamSpec {
  name: string;
  subjects: string[];
  storage: 'file' | 'memory';
  /** Window in which a repeated Nats-Msg-Id is dropped as a duplicate. */
  duplicateWindowMs: number;
  maxAgeMs: number;
  /** Copies kept in a cluster (NATS_STREAM_REPLICAS); default 1. */
  replicas?: number;
}

/** The spec with the configured replica count (NATS_STREAM_REPLICAS). */
export function withReplicas(spec: StreamSpec, replicas: number): StreamSpec {
  return { ...spec, replicas };
}

/** NATS server error code JSStreamNameExistErr; nats.js names only a few codes. */
const STREAM_NAME_IN_USE = 10058;

function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
}

/**
 * Creates the stream, or brings an existing one to the given subjects and limits. Safe to call
 * from every instance at every start: the end state is the same whoever runs first.
 */
export async function ensureStream(nc: NatsConnection, spec: StreamSpec): Promise<StreamInfo> {
  const jsm = await jetstreamManager(nc);
  const config = {
    name: spec.name,
    subjects: spec.subjects,
    storage: spec.storage === 'file' ? StorageType.File : StorageType.Memory,
    duplicate_window: nanos(spec.duplicateWindowMs),
    max_age: nanos(spec.maxAgeMs),
    num_replicas: spec.replicas ?? 1,
  };
  try {
    const existing = await jsm.streams.info(spec.name);
    const same =
      existing.config.storage === config.storage &&
      existing.config.duplicate_window === config.duplicate_window &&
      existing.config.max_age === config.max_age &&
      existing.config.num_replicas === config.num_replicas &&
      [...existing.config.subjects].sort().join(',') === [...config.subjects].sort().join(',');
    if (same) return existing;
    // Updated in place, never recreated (its messages and consumers stay). Storage type cannot
    // change on a live stream; the server rejects that with a clear error.
    return await jsm.streams.update(spec.name, {
      subjects: config.subjects,
      duplicate_window: config.duplicate_window,
      max_age: config.max_age,
      num_replicas: config.num_replicas,
    });
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
    try {
      return await jsm.streams.add(config);
    } catch (addErr) {
      // Another instance created it between our info and add: converge on what is there.
      if (addErr instanceof JetStreamApiError && addErr.code === STREAM_NAME_IN_USE) {
        return jsm.streams.info(spec.name);
      }
      throw addErr;
    }
  }
}

export interface ProvisionStreamsOptions {
  logger: Logger;
  /** Ends the attempts (shutdown). */
  signal?: AbortSignal;
  /** Longest wait between attempts (default 5 s). */
  maxDelayMs?: number;
}

/**
 * Ensures every stream, trying again with backoff until it works or `signal` aborts: an app that
 * starts while JetStream is not ready yet (NATS starting, a cluster electing) provisions its
 * streams as soon as it can, without holding up its own start.
 */
export async function provisionStreams(
  nc: NatsConnection,
  specs: readonly StreamSpec[],
  options: ProvisionStreamsOptions,
): Promise<void> {
  const { logger } = options;
  await pRetry(
    async () => {
      for (const spec of specs) {
        await ensureStream(nc, spec);
        logger.info({ stream: spec.name, subjects: spec.subjects }, 'JetStream stream ready');
      }
    },
    {
      retries: Number.POSITIVE_INFINITY,
      minTimeout: 250,
      maxTimeout: options.maxDelayMs ?? 5000,
      randomize: true,
      signal: options.signal,
      onFailedAttempt: ({ error, attemptNumber }) =>
        logger.warn(
          { err: error, attempt: attemptNumber, streams: specs.map((s) => s.name) },
          'JetStream stream not provisioned yet (NATS); trying again',
        ),
    },
  );
}
