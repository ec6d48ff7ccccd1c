import {
  DATASETS,
  REFSYNC_STREAM,
  SYNC_COMPLETED_SUBJECT,
  syncCompletedEventId,
  type Dataset,
} from '@nhp/refsync-contracts';
import {
  createRefsyncReadRepository,
  createRefsyncWriteRepository,
  ensureRefsyncIndexes,
  syncCompletedEvent,
  type RefsyncWriteRepository,
  type StagedItemChange,
} from '@nhp/refsync-data-access';
import { createLogger } from '@nhp/shared-logger';
import {
  connectNats,
  drainNats,
  ensureStream,
  natsIsConnected,
  publishCloudEvent,
  type CloudEvent,
  type NatsConnection,
} from '@nhp/shared-messaging';
import { closeMongo, connectMongo, mongoIsConnected } from '@nhp/shared-persistence';
import {
  LogCapture as SharedLogCapture,
  startTestInfra,
  type TestInfra,
} from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import type { DatasetReader } from '@nhp/refsync-read';
import { sha256Hex, type ApiKeyEntry } from '../../src/auth/api-keys';
import { createApp, type RefsyncApp, type RefsyncAppDeps } from '../../src/app';

export const TEST_KEY = 'test-key-acme';
export const TEST_CLIENT = 'acme';

export function keyEntry(client: string, key: string): ApiKeyEntry {
  return { client, sha256: Buffer.from(sha256Hex(key), 'hex') };
}

/** Log lines as parsed JSON objects (the shared capture, named after this app). */
export class LogCapture extends SharedLogCapture {
  constructor(level = 'debug') {
    super(level, 'refsync-api-test');
  }
}

/** The read repository with a count of every call: "no database access" becomes observable. */
export function countingReader(inner: DatasetReader): DatasetReader & { calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    currentVersion() {
      calls++;
      return inner.currentVersion();
    },
    scanItems(dataset, options, onItem) {
      calls++;
      return inner.scanItems(dataset, options, onItem);
    },
  };
}

export type Changes = Partial<Record<Dataset, Array<StagedItemChange>>>;

const zeroCounts = { added: 0, updated: 0, deleted: 0, total: 0 };

/** The CloudEvent the importer would publish for a commit from `previous` to `previous + 1`. */
export function syncCompletedFor(previous: number): CloudEvent {
  const now = new Date().toISOString();
  return syncCompletedEvent.build(
    {
      runId: `test-run-${previous + 1}`,
      previousVersion: previous,
      currentVersion: previous + 1,
      changed: true,
      datasets: { treatmentGroup: zeroCounts, reimbursementGroup: zeroCounts },
      startedAt: now,
      completedAt: now,
      source: { treatmentGroup: 'test', reimbursementGroup: 'test' },
    },
    { id: syncCompletedEventId(previous + 1) },
  );
}

export interface Harness {
  infra: TestInfra;
  connection: Connection;
  nats: NatsConnection;
  writer: RefsyncWriteRepository;
  logs: LogCapture;
  /** Builds an app on this infrastructure; closed with the harness. */
  app(
    overrides?: Partial<RefsyncAppDeps>,
  ): RefsyncApp & { reader: ReturnType<typeof countingReader> };
  /** Stages the changes as the next version without committing (a sync in progress). */
  stage(changes: Changes): Promise<number>;
  /** Stages and commits the next version, as the importer does; returns it. */
  commit(changes: Changes, options?: { publishEvent?: boolean }): Promise<number>;
  /** Publishes the sync-completed event of the commit that produced `version`. */
  publishSyncCompleted(version: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Real infrastructure for one test file: MongoDB wire protocol (the project's server or
 * MONGO_URL) and a real nats-server, the data-access write side to seed versions, and apps built
 * with createApp on top.
 */
export async function startHarness(): Promise<Harness> {
  const infra = await startTestInfra();
  const silent = createLogger({ name: 'harness', level: 'silent' });
  const connection = await connectMongo({ uri: infra.mongoUri, logger: silent });
  await ensureRefsyncIndexes(connection);
  const nats = await connectNats({
    servers: infra.natsUrl,
    name: 'refsync-api-test',
    logger: silent,
  });
  await ensureStream(nats, {
    name: REFSYNC_STREAM,
    subjects: ['refsync.events.>'],
    storage: 'memory',
    duplicateWindowMs: 120_000,
    maxAgeMs: 3_600_000,
  });
  const writer = createRefsyncWriteRepository(connection);
  const logs = new LogCapture();
  const apps: RefsyncApp[] = [];

  async function stage(changes: Changes): Promise<number> {
    await writer.recover();
    const { version } = await writer.readState();
    const next = version + 1;
    const committedAt = new Date();
    for (const dataset of DATASETS) {
      const list = changes[dataset];
      if (list && list.length > 0) await writer.stageChanges(next, dataset, list, committedAt);
    }
    return next;
  }

  async function publishSyncCompleted(version: number): Promise<void> {
    await publishCloudEvent(nats, SYNC_COMPLETED_SUBJECT, syncCompletedFor(version - 1));
  }

  return {
    infra,
    connection,
    nats,
    writer,
    logs,
    app(overrides = {}) {
      const reader = countingReader(createRefsyncReadRepository(connection));
      const app = createApp({
        logger: logs.logger,
        reader,
        apiKeys: [keyEntry(TEST_CLIENT, TEST_KEY)],
        nats,
        cacheMaxBytes: 64 * 1024 * 1024,
        versionCheckIntervalMs: 3_600_000,
        connections: {
          mongodb: () => mongoIsConnected(connection),
          nats: () => natsIsConnected(nats),
        },
        // Many apps in one process: the process metrics once would do, none is enough.
        defaultMetrics: false,
        ...overrides,
      });
      apps.push(app);
      return Object.assign(app, { reader });
    },
    stage,
    async commit(changes, options = {}) {
      const next = await stage(changes);
      const committedAt = new Date();
      const event = syncCompletedFor(next - 1);
      await writer.commit({
        expectedVersion: next - 1,
        nextVersion: next,
        committedAt,
        event: {
          id: event.id,
          subject: SYNC_COMPLETED_SUBJECT,
          payload: event,
          createdAt: committedAt,
          publishedAt: null,
        },
      });
      if (options.publishEvent) await publishSyncCompleted(next);
      return next;
    },
    publishSyncCompleted,
    async stop() {
      for (const app of apps) await app.close();
      await drainNats(nats);
      await closeMongo(connection);
      await infra.stop();
    },
  };
}

/** Polls until `check` holds; for effects that arrive asynchronously (events, timers). */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Treatment group data with an upstream field beyond id and name (kept as supplied). */
export function tg(id: string, name: string) {
  return { id, name, atcCodes: ['A10'], description: `Behandlingsgruppe ${name}` };
}

/** A reimbursement group with the code systems the contracts name. */
export function rg(id: string, display: string, varenummer = '526181') {
  return {
    id,
    legalBasis: {
      coding: [{ system: 'urn:oid:2.16.578.1.12.4.1.1.7427', code: '200', display: '§5-14 §2' }],
    },
    indications: [
      { coding: [{ system: 'urn:oid:2.16.578.1.12.4.1.1.7170', code: 'T90', display }] },
      {
        coding: [
          {
            system: 'urn:oid:2.16.578.1.12.4.1.1.7110',
            code: 'E11',
            display: 'Diabetes mellitus type 2',
          },
        ],
      },
    ],
    medicines: [
      {
        reference: null,
        type: 'Legemiddelpakning',
        identifier: { system: 'urn:nhp:fest:varenummer', value: varenummer },
        display: 'Lantus inj 100 E/ml',
      },
    ],
  };
}

export const put = (data: { id: string }): StagedItemChange => ({
  itemId: data.id,
  data: data as never,
  isDeleted: false,
});
export const del = (id: string): StagedItemChange => ({ itemId: id, isDeleted: true });
