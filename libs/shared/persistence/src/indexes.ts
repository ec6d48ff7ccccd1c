import type { Logger } from 'pino';
import type { Connection } from 'mongoose';

/** A declared index, named as operators see it: `<collection>.<index name>`. */
export interface DeclaredIndex {
  collection: string;
  name: string;
  keys: Record<string, unknown>;
}

/** The command that builds every app's indexes (README: "Indexes"). */
export const BUILD_INDEXES_COMMAND = 'npm run db-indexes';

/**
 * An app was told not to build indexes (MONGO_ENSURE_INDEXES=false) and the database lacks some
 * it declares: it must not serve (a missing unique index lets concurrent first writes duplicate).
 */
export class MissingIndexesError extends Error {
  constructor(readonly missing: DeclaredIndex[]) {
    super(
      `The database lacks ${missing.length} declared index(es): ${missing
        .map((i) => `${i.collection}.${i.name}`)
        .join(', ')}. Build them with \`${BUILD_INDEXES_COMMAND}\` (MONGO_URL set), or start ` +
        'with MONGO_ENSURE_INDEXES=true.',
    );
    this.name = 'MissingIndexesError';
  }
}

function indexName(keys: Record<string, unknown>, options: Record<string, unknown>): string {
  if (typeof options['name'] === 'string') return options['name'];
  // MongoDB's default name: key_direction pairs joined by underscores.
  return Object.entries(keys)
    .map(([k, v]) => `${k}_${String(v)}`)
    .join('_');
}

/** Every index the connection's models declare that the database lacks (no model: none). */
export async function missingIndexes(conn: Connection): Promise<DeclaredIndex[]> {
  const missing: DeclaredIndex[] = [];
  for (const model of Object.values(conn.models)) {
    const { toCreate } = await model.diffIndexes({ indexOptionsToCreate: true });
    for (const entry of toCreate as unknown as Array<
      [Record<string, unknown>, Record<string, unknown>]
    >) {
      const [keys, options] = entry;
      missing.push({
        collection: model.collection.collectionName,
        name: indexName(keys, options),
        keys,
      });
    }
  }
  return missing;
}

/**
 * Creates each declared index the database lacks, for every model on the connection, and drops
 * none (an operator's own index, or one a newer version of the app still needs during a rolling
 * deploy, stays). Returns what it created.
 */
export async function ensureIndexes(conn: Connection, logger?: Logger): Promise<DeclaredIndex[]> {
  const missing = await missingIndexes(conn);
  const byModel = new Set(missing.map((i) => i.collection));
  for (const model of Object.values(conn.models)) {
    if (byModel.has(model.collection.collectionName)) await model.createIndexes();
  }
  for (const index of missing) {
    logger?.info({ collection: index.collection, index: index.name }, 'index created');
  }
  return missing;
}

/**
 * What an app does with its indexes at start, before it serves: builds the missing ones (the
 * default), or, when an operator builds them separately (`ensure: false`), checks and throws
 * MissingIndexesError naming each missing one.
 */
export async function prepareIndexes(
  conn: Connection,
  options: { ensure: boolean; logger?: Logger },
): Promise<void> {
  if (options.ensure) {
    await ensureIndexes(conn, options.logger);
    return;
  }
  const missing = await missingIndexes(conn);
  if (missing.length > 0) throw new MissingIndexesError(missing);
}
