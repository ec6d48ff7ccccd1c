/**
 * refsync-api and refsync-importer as processes for fault tests, the upstream files the importer
 * reads (the shipped sample versions, swapped in place as an upstream would), and versions seeded
 * straight through the data-access write side.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DATASETS, SYNC_COMPLETED_SUBJECT, syncCompletedEventId } from '@nhp/refsync-contracts';
import { createRefsyncWriteRepository, ensureRefsyncIndexes } from '@nhp/refsync-data-access';
import { readSampleData, sampleDataPath, type SampleVersion } from '@nhp/refsync-sample-data';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { startAppProcess, type AppProcess } from '@nhp/shared-testing';
import { LOG_LEVEL } from './fault';

/** Accepted outside production when no keys / no token are configured (the apps' READMEs). */
export const DEV_API_KEY = 'local-dev-key';
export const DEV_ADMIN_TOKEN = 'local-admin-token';

export function startRefsyncApi(env: {
  mongoUri: string;
  natsUrl: string;
  /** Default 30 s (the app's); an hour leaves only the event to announce a new version. */
  versionCheckIntervalMs?: number;
}): Promise<AppProcess> {
  return startAppProcess({
    name: 'refsync-api',
    entry: 'apps/refsync-api/src/main.ts',
    portVariable: 'REFSYNC_API_PORT',
    healthPath: '/readyz',
    env: {
      REFSYNC_API_HOST: '127.0.0.1',
      MONGO_URL: env.mongoUri,
      LOG_LEVEL: LOG_LEVEL,
      NATS_URL: env.natsUrl,
      ...(env.versionCheckIntervalMs === undefined
        ? {}
        : { REFSYNC_VERSION_CHECK_INTERVAL_MS: String(env.versionCheckIntervalMs) }),
    },
  });
}

export interface UpstreamFiles {
  treatmentGroup: string;
  reimbursementGroup: string;
  /** Replaces both files with a shipped sample version, as an upstream publishing its next one. */
  publish(version: SampleVersion): Promise<void>;
  dispose(): Promise<void>;
}

/** A private copy of a shipped sample version as the importer's upstream. */
export async function upstreamFiles(version: SampleVersion): Promise<UpstreamFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'nhp-faults-upstream-'));
  const files = {
    treatmentGroup: join(dir, 'treatment-groups.json'),
    reimbursementGroup: join(dir, 'reimbursement-groups.json'),
  };
  const publish = async (v: SampleVersion) => {
    for (const dataset of DATASETS) await copyFile(sampleDataPath(v, dataset), files[dataset]);
  };
  await publish(version);
  return { ...files, publish, dispose: () => rm(dir, { recursive: true, force: true }) };
}

export function startImporter(env: {
  mongoUri: string;
  natsUrl: string;
  /** The upstream files (paths). */
  upstream: { treatmentGroup: string; reimbursementGroup: string };
  extra?: Record<string, string>;
}): Promise<AppProcess> {
  return startAppProcess({
    name: 'refsync-importer',
    entry: 'apps/refsync-importer/src/main.ts',
    portVariable: 'REFSYNC_IMPORTER_PORT',
    healthPath: '/readyz',
    env: {
      REFSYNC_IMPORTER_HOST: '127.0.0.1',
      MONGO_URL: env.mongoUri,
      LOG_LEVEL: LOG_LEVEL,
      NATS_URL: env.natsUrl,
      REFSYNC_SOURCE_TREATMENT_GROUP: pathToFileURL(env.upstream.treatmentGroup).href,
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: pathToFileURL(env.upstream.reimbursementGroup).href,
      // Only the test starts runs (POST /sync), apart from the worker's first one at start.
      REFSYNC_SCHEDULE: '0 0 1 1 *',
      REFSYNC_PUBLISH_INTERVAL_MS: '250',
      ...env.extra,
    },
  });
}

/**
 * Commits `count` versions as the importer would (stage, then one commit write; the events are
 * marked published, so no publisher sends them): version 1 holds the v1 sample data, each later
 * one renames one treatment group. Returns the last version.
 */
export async function seedVersions(mongoUri: string, count: number): Promise<number> {
  const logger = createLogger({ name: 'fault-tests-seed', level: 'silent' });
  const connection = await connectMongo({ uri: mongoUri, logger });
  try {
    await ensureRefsyncIndexes(connection);
    const writer = createRefsyncWriteRepository(connection);
    const treatmentGroups = await readSampleData('v1', 'treatmentGroup');
    const reimbursementGroups = await readSampleData('v1', 'reimbursementGroup');
    const { version: start } = await writer.readState();
    for (let next = start + 1; next <= start + count; next++) {
      const committedAt = new Date();
      if (next === 1) {
        await writer.stageChanges(
          next,
          'reimbursementGroup',
          reimbursementGroups.map((data) => ({ itemId: data.id, data, isDeleted: false })),
          committedAt,
        );
        await writer.stageChanges(
          next,
          'treatmentGroup',
          treatmentGroups.map((data) => ({ itemId: data.id, data, isDeleted: false })),
          committedAt,
        );
      } else {
        const item = treatmentGroups[next % treatmentGroups.length] as { id: string; name: string };
        await writer.stageChanges(
          next,
          'treatmentGroup',
          [
            {
              itemId: item.id,
              data: { ...item, name: `${item.name} (${next})` },
              isDeleted: false,
            },
          ],
          committedAt,
        );
      }
      await writer.commit({
        expectedVersion: next - 1,
        nextVersion: next,
        committedAt,
        event: {
          id: syncCompletedEventId(next),
          subject: SYNC_COMPLETED_SUBJECT,
          payload: { seeded: true },
          createdAt: committedAt,
          publishedAt: committedAt,
        },
      });
    }
    return start + count;
  } finally {
    await closeMongo(connection);
  }
}
