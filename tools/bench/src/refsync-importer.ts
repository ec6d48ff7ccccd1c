/**
 * refsync-importer benchmark: an initial import of 100k items, then a run where 1% of them changed.
 *
 *   npm run bench -- refsync-importer        (or: npx tsx --tsconfig tsconfig.base.json tools/bench/src/refsync-importer.ts)
 *
 * The importer runs as it does in production, `refsync-importer --once` in its own Node process,
 * against the project's MongoDB-compatible server (or MONGO_URL) and a nats-server. Durations come
 * from the importer's own run records (process start-up is not part of a run); documents written
 * are counted in the database afterwards. Targets (issue 5): the second run writes at most
 * 1.1 × changed items + a constant documents, and takes at most 0.3 × the initial import's time.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { start as startMongoServer } from '@nhp/mongo-server';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { startNatsServer, withDatabase } from '@nhp/shared-testing';
import { generateSynthetic, runTs } from './support/programs';

const REIMBURSEMENT_ITEMS = 90_000;
const TREATMENT_ITEMS = 10_000;
const CHANGE_SHARE = 0.01;
/** Per run: the state document's commit, the run record (start, finish), the lease (take, release). */
const CONSTANT_DOCUMENTS = 10;

/**
 * bench is a scope:shared tool and may not import refsync libs, so it drives refsync programs as a
 * person would (the synthetic-data generator and the importer CLI) and reads the results from the
 * collections they document.
 */
const ITEMS_COLLECTION = 'refsync_items';
const RUNS_COLLECTION = 'refsync_importer_runs';

function runImporterOnce(env: Record<string, string>) {
  return runTs('apps/refsync-importer/src/main.ts', ['--once'], {
    LOG_LEVEL: 'warn',
    NODE_ENV: 'development',
    ...env,
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const verdict = (ok: boolean) => (ok ? 'MET' : 'NOT MET');

export async function run(): Promise<void> {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const dir = await mkdtemp(join(tmpdir(), 'refsync-importer-bench-'));
  const mongo = process.env['MONGO_URL']
    ? undefined
    : await startMongoServer({ port: 0, dataFile: join(dir, 'mongo.data') });
  const nats = await startNatsServer();
  const mongoUrl = withDatabase(
    process.env['MONGO_URL'] ?? mongo?.uri ?? '',
    `bench_importer_${randomBytes(4).toString('hex')}`,
  );
  const logger = createLogger({ name: 'bench', level: 'warn' });
  const conn = await connectMongo({ uri: mongoUrl, logger });
  try {
    const tgFile = join(dir, 'treatment-groups.json');
    const rgFile = join(dir, 'reimbursement-groups.json');
    const env = {
      MONGO_URL: mongoUrl,
      NATS_URL: nats.url,
      REFSYNC_SOURCE_TREATMENT_GROUP: pathToFileURL(tgFile).href,
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: pathToFileURL(rgFile).href,
    };
    const total = REIMBURSEMENT_ITEMS + TREATMENT_ITEMS;
    say(
      `generating ${total} synthetic items (${REIMBURSEMENT_ITEMS} reimbursement groups, ${TREATMENT_ITEMS} treatment groups)`,
    );
    // Two upstream states 1% apart; the runs after the initial import alternate between them, so
    // each one has 1% changed items.
    const states = {
      original: { tg: join(dir, 'tg-original.json'), rg: join(dir, 'rg-original.json') },
      changed: { tg: join(dir, 'tg-changed.json'), rg: join(dir, 'rg-changed.json') },
    };
    await generateSynthetic('reimbursementGroup', REIMBURSEMENT_ITEMS, states.original.rg, 0);
    await generateSynthetic('treatmentGroup', TREATMENT_ITEMS, states.original.tg, 0);
    await generateSynthetic(
      'reimbursementGroup',
      REIMBURSEMENT_ITEMS,
      states.changed.rg,
      CHANGE_SHARE,
    );
    await generateSynthetic('treatmentGroup', TREATMENT_ITEMS, states.changed.tg, CHANGE_SHARE);
    const publish = async (state: keyof typeof states) => {
      await copyFile(states[state].tg, tgFile);
      await copyFile(states[state].rg, rgFile);
    };
    await publish('original');

    const items = conn.collection(ITEMS_COLLECTION);
    const runs = conn.collection<{
      startedAt: Date;
      endedAt: Date | null;
      committedVersion: number | null;
      datasets: Record<
        string,
        { added: number; changed: number; deleted: number; reappeared: number }
      > | null;
    }>(RUNS_COLLECTION);
    const measure = async (label: string) => {
      const result = await runImporterOnce(env);
      if (result.code !== 0)
        throw new Error(
          `${label}: refsync-importer --once exited ${result.code}\n${result.output}`,
        );
      const [record] = await runs.find().sort({ startedAt: -1 }).limit(1).toArray();
      if (!record?.endedAt || record.committedVersion === null)
        throw new Error(`${label}: no committed run recorded\n${result.output}`);
      const version = record.committedVersion;
      // One head document per item (libs/refsync/data-access README): the run wrote exactly the
      // item documents that now carry its version, inserted or updated in place.
      const itemDocuments = await items.countDocuments({ version });
      return {
        durationMs: record.endedAt.getTime() - record.startedAt.getTime(),
        version,
        itemDocuments,
        datasets: record.datasets,
      };
    };

    say('initial import …');
    const initial = await measure('initial import');
    say(
      `initial import: ${total} items committed as version ${initial.version} in ${seconds(initial.durationMs)}; documents written: ${initial.itemDocuments}`,
    );

    // The machine is shared (2 cores): the median of three 1%-changed runs steadies the figure.
    const followUps = [];
    for (const [i, state] of (['changed', 'original', 'changed'] as const).entries()) {
      await publish(state);
      say(`run ${i + 2} (1% changed) …`);
      followUps.push(await measure(`run ${i + 2}`));
    }
    const sorted = [...followUps].sort((a, b) => a.durationMs - b.durationMs);
    const second = sorted[1] ?? sorted[0];
    if (!second) throw new Error('no follow-up run measured');
    say(
      `follow-up run durations: ${followUps.map((r) => seconds(r.durationMs)).join(', ')}; median taken`,
    );
    const changed = Object.values(second.datasets ?? {}).reduce(
      (n, c) => n + c.added + c.changed + c.deleted + c.reappeared,
      0,
    );
    const written = second.itemDocuments + 1;

    const writeLimit = 1.1 * changed + CONSTANT_DOCUMENTS;
    const ratio = second.durationMs / initial.durationMs;
    say('');
    say(
      `1%-changed run (median): ${changed} changed items of ${total}, committed as version ${second.version} in ${seconds(second.durationMs)}`,
    );
    say(
      `  documents written: ${written} (item documents ${second.itemDocuments}, state commit 1)` +
        `  target <= 1.1 x ${changed} + ${CONSTANT_DOCUMENTS} = ${writeLimit.toFixed(0)}: ${verdict(written <= writeLimit)}`,
    );
    say(`  per changed item: ${(written / Math.max(1, changed)).toFixed(2)} writes`);
    say(
      `  duration: ${seconds(second.durationMs)} / ${seconds(initial.durationMs)} = ${ratio.toFixed(3)}  target <= 0.3: ${verdict(ratio <= 0.3)}`,
    );
  } finally {
    await closeMongo(conn);
    await nats.dispose();
    await mongo?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
