import { registerPrivacyModels } from '@nhp/privacy-data-access';
import { registerRefsyncModels } from '@nhp/refsync-data-access';
import { commonEnvShape, parseEnv } from '@nhp/shared-config';
import { createLogger } from '@nhp/shared-logger';
import {
  closeMongo,
  connectMongo,
  ensureIndexes,
  missingIndexes,
  mongoOptionsFromConfig,
  type DeclaredIndex,
} from '@nhp/shared-persistence';
import { parseArgs } from 'node:util';
import { z } from 'zod';

export interface Io {
  env: Record<string, string | undefined>;
  out(line: string): void;
  err(line: string): void;
}

export const USAGE = `Usage: npm run db-indexes [-- --check]

Builds every index that privacy-api, refsync-api and refsync-importer declare and the database at
MONGO_URL lacks; drops none. With --check it builds nothing and lists what is missing.
Exit status: 0 done (or nothing missing), 1 missing indexes (--check) or a failure, 2 wrong arguments.`;

const envSchema = z.object({
  MONGO_URL: commonEnvShape.MONGO_URL,
  MONGO_WRITE_CONCERN: commonEnvShape.MONGO_WRITE_CONCERN,
  MONGO_SERVER_SELECTION_TIMEOUT_MS: commonEnvShape.MONGO_SERVER_SELECTION_TIMEOUT_MS,
});

const describe = (i: DeclaredIndex) => `${i.collection}.${i.name} ${JSON.stringify(i.keys)}`;

/**
 * `npm run db-indexes`: the one command that builds the indexes of every app, for operators who
 * turn the apps' own build off (MONGO_ENSURE_INDEXES=false) and build them as a deploy step.
 */
export async function runDbIndexes(argv: string[], io: Io): Promise<number> {
  let check: boolean;
  try {
    const { values } = parseArgs({
      args: argv,
      options: { check: { type: 'boolean', default: false }, help: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    check = values.check;
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const config = parseEnv(envSchema, io.env);
  const logger = createLogger({ name: 'db-indexes', level: 'error', pretty: false });
  const connection = await connectMongo({
    ...mongoOptionsFromConfig(config),
    logger,
    appName: 'db-indexes',
    startupTimeoutMs: 5000,
  });
  try {
    registerPrivacyModels(connection);
    registerRefsyncModels(connection);
    if (check) {
      const missing = await missingIndexes(connection);
      for (const index of missing) io.out(`missing ${describe(index)}`);
      io.out(missing.length === 0 ? 'every declared index exists' : `${missing.length} missing`);
      return missing.length === 0 ? 0 : 1;
    }
    const created = await ensureIndexes(connection);
    for (const index of created) io.out(`created ${describe(index)}`);
    io.out(`${created.length} index(es) created; every declared index exists`);
    return 0;
  } finally {
    await closeMongo(connection);
  }
}
