import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { parseEnv } from '@nhp/shared-config';
import { createLogger, type Logger } from '@nhp/shared-logger';
import { createRefsyncReadRepository } from '@nhp/refsync-data-access';
import { sampleDataPath } from '@nhp/refsync-sample-data';
import type { Dataset } from '@nhp/refsync-contracts';
import { withDatabase, type TestInfra } from '@nhp/shared-testing';
import {
  createImporterContext,
  type ImporterContext,
  type ImporterContextOptions,
} from '../src/context';
import { importerEnvSchema, type ImporterConfig } from '../src/config';

export const tg = (id: string, name = `Behandlingsgruppe ${id}`, extra: object = {}) => ({
  id,
  name,
  ...extra,
});

export const rg = (id: string, legalCode = '200') => ({
  id,
  legalBasis: {
    coding: [
      {
        system: 'urn:oid:2.16.578.1.12.4.1.1.7427',
        code: legalCode,
        display: legalCode === '200' ? '§5-14 §2' : '§5-14 §3',
      },
    ],
  },
  indications: [
    {
      coding: [
        { system: 'urn:oid:2.16.578.1.12.4.1.1.7170', code: 'T90', display: 'Diabetes type 2' },
      ],
    },
  ],
  medicines: [
    {
      reference: null,
      type: 'Medication',
      identifier: { system: 'urn:oid:2.16.578.1.12.4.1.1.7180', value: '526181' },
      display: null,
    },
  ],
});

/** A private directory of upstream files for one test file. */
export async function upstreamDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'refsync-importer-test-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes an upstream file as a JSON array (default) or NDJSON and returns its file URL. */
export async function writeUpstream(
  dir: string,
  name: string,
  items: unknown[],
  format: 'array' | 'ndjson' = 'array',
): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    format === 'array'
      ? JSON.stringify(items, null, 1)
      : items.map((i) => JSON.stringify(i)).join('\n') + '\n',
  );
  return pathToFileURL(file).href;
}

export const quietLogger = (): Logger =>
  createLogger({ name: 'refsync-importer-test', level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });

/** The bundled v1 sample data as source URLs (what the dev stack passes). */
export const sampleSources = () => ({
  REFSYNC_SOURCE_TREATMENT_GROUP: pathToFileURL(sampleDataPath('v1', 'treatmentGroup')).href,
  REFSYNC_SOURCE_REIMBURSEMENT_GROUP: pathToFileURL(sampleDataPath('v1', 'reimbursementGroup'))
    .href,
});

/**
 * Importer configuration for tests: a database of its own unless `mongoUri` is given; the sample
 * data as sources unless `env` names others.
 */
export function testConfig(
  infra: TestInfra,
  env: Record<string, string>,
  mongoUri?: string,
): ImporterConfig {
  return parseEnv(importerEnvSchema, {
    NODE_ENV: 'test',
    MONGO_URL:
      mongoUri ?? withDatabase(infra.mongoUri, `${infra.dbName}_${randomBytes(4).toString('hex')}`),
    NATS_URL: infra.natsUrl,
    REFSYNC_SOURCE_RETRIES: '2',
    REFSYNC_SOURCE_TIMEOUT_MS: '2000',
    REFSYNC_LEASE_TTL_MS: '5000',
    REFSYNC_PUBLISH_INTERVAL_MS: '200',
    ...sampleSources(),
    ...env,
  });
}

export async function startContext(
  config: ImporterConfig,
  options: Partial<ImporterContextOptions> = {},
): Promise<ImporterContext> {
  return createImporterContext({
    config,
    logger: quietLogger(),
    publishBackoff: { baseDelayMs: 20, maxDelayMs: 200 },
    // Many contexts in one process: no process metrics for each.
    defaultMetrics: false,
    ...options,
  });
}

/** What a reader (refsync-api's read repository) sees now: the version and each dataset's active items. */
export async function readerView(conn: Connection) {
  const reader = createRefsyncReadRepository(conn);
  const version = await reader.currentVersion();
  const active = async (dataset: Dataset) =>
    (await reader.listItems(dataset, { atVersion: version })).map((i) => i.data as { id: string });
  return {
    version,
    treatmentGroup: await active('treatmentGroup'),
    reimbursementGroup: await active('reimbursementGroup'),
    reader,
  };
}

export const ids = (items: Array<{ id: string }>) => items.map((i) => i.id).sort();

/** Polls until `check` returns a truthy value (never asserts on time: the limit only ends a hung test). */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  limitMs = 15_000,
): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Jest wiring shared by the component tests: a temporary folder for upstream files and the
 * importer contexts a test starts (push them to `contexts`), all closed after the file.
 */
export function useUpstreamFiles(): { readonly dir: string; contexts: ImporterContext[] } {
  let files: Awaited<ReturnType<typeof upstreamDir>> | undefined;
  const contexts: ImporterContext[] = [];
  beforeAll(async () => {
    files = await upstreamDir();
  });
  afterAll(async () => {
    for (const ctx of contexts) await ctx.close();
    await files?.cleanup();
  });
  return {
    get dir() {
      if (!files) throw new Error('upstream folder not created yet (use inside tests or hooks)');
      return files.dir;
    },
    contexts,
  };
}
