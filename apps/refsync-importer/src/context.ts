import type { Connection } from 'mongoose';
import type { Dataset } from '@nhp/refsync-contracts';
import {
  createLeaseRepository,
  createRefsyncWriteRepository,
  createRunRepository,
  registerRefsyncModels,
} from '@nhp/refsync-data-access';
import {
  createImporter,
  createImporterMetrics,
  createOutboxPublisher,
  instanceId,
  refsyncStreamSpec,
  type ImporterOptions,
} from '@nhp/refsync-import';
import { createUpstreamSource } from '@nhp/refsync-sources';
import type { UpstreamSource } from '@nhp/refsync-sync';
import type { Logger } from '@nhp/shared-logger';
import {
  connectNats,
  drainNats,
  natsIsConnected,
  provisionStreams,
  withReplicas,
  type NatsConnection,
} from '@nhp/shared-messaging';
import {
  connectMongo,
  mongoIsConnected,
  mongoOptionsFromConfig,
  prepareIndexes,
} from '@nhp/shared-persistence';
import type { ImporterConfig } from './config';

export function createSources(
  config: ImporterConfig,
  logger: Logger,
): Record<Dataset, UpstreamSource> {
  const options = {
    headers: config.REFSYNC_SOURCE_AUTH_HEADER,
    timeoutMs: config.REFSYNC_SOURCE_TIMEOUT_MS,
    retries: config.REFSYNC_SOURCE_RETRIES,
    logger,
  };
  return {
    treatmentGroup: createUpstreamSource(config.REFSYNC_SOURCE_TREATMENT_GROUP, options),
    reimbursementGroup: createUpstreamSource(config.REFSYNC_SOURCE_REIMBURSEMENT_GROUP, options),
  };
}

export interface ImporterContextOptions {
  config: ImporterConfig;
  logger: Logger;
  /** Injected in tests to reach a hook point; see ImporterOptions.afterStaged. */
  afterStaged?: ImporterOptions['afterStaged'];
  /** Publisher backoff bounds (tests shorten them). */
  publishBackoff?: { baseDelayMs: number; maxDelayMs: number };
  /** false for the commands that publish nothing (--dry-run, --history). */
  connectToNats?: boolean;
  /** The run coordinator's clock (tests move it to let a lease expire). */
  now?: ImporterOptions['now'];
  /** prom-client's process metrics (default true; tests that start many contexts turn them off). */
  defaultMetrics?: boolean;
}

/**
 * Everything the importer needs, wired from configuration: MongoDB (awaited: nothing works
 * without it), NATS (connected in the background: a NATS outage must not stop a sync, the outbox
 * keeps its event), repositories, sources, metrics, the run coordinator and the outbox publisher.
 */
export async function createImporterContext(options: ImporterContextOptions) {
  const { config, logger } = options;
  const conn: Connection = await connectMongo({
    ...mongoOptionsFromConfig(config),
    logger,
    appName: 'refsync-importer',
  });
  registerRefsyncModels(conn);
  await prepareIndexes(conn, { ensure: config.MONGO_ENSURE_INDEXES, logger });
  const writeRepo = createRefsyncWriteRepository(conn);
  const runs = createRunRepository(conn);
  const leases = createLeaseRepository(conn);

  let nc: NatsConnection | undefined;
  let natsClosed = false;
  const stopProvisioning = new AbortController();
  // REFSYNC_EVENTS with the configured replicas, provisioned as soon as NATS is there (so that a
  // downstream consumer can be added before the first sync), and again before a publish after a
  // failure (the stream may have been lost with a NATS server).
  const stream = withReplicas(refsyncStreamSpec, config.NATS_STREAM_REPLICAS);
  const natsReady = (
    options.connectToNats === false
      ? Promise.resolve(undefined)
      : connectNats({ servers: config.NATS_URL, name: 'refsync-importer', logger })
  )
    .then(async (connection) => {
      if (!connection) return undefined;
      if (natsClosed) {
        await connection.close();
        return undefined;
      }
      nc = connection;
      void provisionStreams(connection, [stream], {
        logger,
        signal: stopProvisioning.signal,
      }).then(
        () => {
          publisher.streamProvisioned();
          publisher.kick();
        },
        () => undefined,
      );
      publisher.kick();
      return connection;
    })
    .catch((err: unknown) => {
      logger.error({ err }, 'could not connect to NATS; events stay in the outbox');
      return undefined;
    });

  const metrics = createImporterMetrics(
    {
      lastCommittedVersion: async () => (await writeRepo.readState()).version,
      // The state document's outbox, oldest first (one document, trimmed); not tried while
      // MongoDB is known down, so a scrape shows the last values at once.
      async outboxBacklog() {
        if (!mongoIsConnected(conn)) throw new Error('MongoDB is not connected');
        const pending = await writeRepo.pendingEvents();
        return { pending: pending.length, oldestCreatedAt: pending[0]?.createdAt };
      },
      natsConnected: () => natsIsConnected(nc),
      mongodbConnected: () => mongoIsConnected(conn),
      // Read at scrape time like the outbox, so every instance shows what any of them did.
      async lastSuccessAt() {
        if (!mongoIsConnected(conn)) throw new Error('MongoDB is not connected');
        return runs.lastSucceededAt();
      },
      async lease() {
        if (!mongoIsConnected(conn)) throw new Error('MongoDB is not connected');
        return leases.current();
      },
      // The clock the lease is judged by (tests inject one).
      now: options.now ? () => (options.now as () => Date)().getTime() : undefined,
    },
    { defaultMetrics: options.defaultMetrics },
  );

  // Ensures the stream before its first publish unless provisioned above, and again after a
  // failed publish (the stream may have been lost with a NATS server).
  const publisher = createOutboxPublisher({
    outbox: writeRepo,
    nats: () => nc,
    logger,
    stream,
    events: metrics.events,
    ...options.publishBackoff,
  });
  const instance = instanceId();
  const sources = createSources(config, logger);
  const importer = createImporter({
    writeRepo,
    runs,
    leases,
    sources,
    logger,
    instance,
    maxDeleteShare: config.REFSYNC_MAX_DELETE_SHARE,
    leaseTtlMs: config.REFSYNC_LEASE_TTL_MS,
    metrics,
    onEventRecorded: () => publisher.kick(),
    afterStaged: options.afterStaged,
    now: options.now,
  });

  return {
    config,
    conn,
    writeRepo,
    runs,
    leases,
    sources,
    metrics,
    instance,
    importer,
    publisher,
    nats: () => nc,
    natsReady,
    async close(): Promise<void> {
      natsClosed = true;
      stopProvisioning.abort();
      await publisher.stop();
      await drainNats(nc);
      await conn.close();
    },
  };
}

export type ImporterContext = Awaited<ReturnType<typeof createImporterContext>>;
