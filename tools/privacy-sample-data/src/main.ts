/**
 * Seeds privacy-api's development data into MONGO_URL (the dev stack runs this once privacy-api
 * is healthy). Refuses NODE_ENV=production: sample data never goes near real data.
 */
import { createJournal, ensureJournalIndexes } from '@nhp/privacy-data-access';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { SAMPLE_CITIZENS, SAMPLE_CLIENT_ID, SAMPLE_PART } from './sample-data';
import { seedPrivacySampleData } from './seed';

async function main(): Promise<void> {
  if (process.env['NODE_ENV'] === 'production') {
    process.stderr.write(
      'privacy-sample-data: refusing to seed sample data with NODE_ENV=production\n',
    );
    process.exit(2);
  }
  const uri = process.env['MONGO_URL'] ?? 'mongodb://127.0.0.1:27017/nhp';
  const logger = createLogger({
    name: 'privacy-sample-data',
    level: process.env['LOG_LEVEL'] ?? 'error',
  });
  const connection = await connectMongo({ uri, logger, appName: 'privacy-sample-data' });
  try {
    await ensureJournalIndexes(connection);
    const journal = createJournal({ connection, logger });
    const report = await seedPrivacySampleData({ connection, journal });
    await journal.stop();
    const wrote =
      report.definitions + report.inclusions + report.representationCallers > 0 ||
      report.part ||
      report.grant;
    process.stdout.write(
      `${wrote ? 'seeded' : 'already present'}: party ${SAMPLE_PART.partKode} (client ${SAMPLE_CLIENT_ID} may read and write), ` +
        `4 definitions, settings, an inclusion and representation relationships; ` +
        `citizen tokens: npm run -s privacy-token -- --pid ${SAMPLE_CITIZENS.kari}\n`,
    );
  } finally {
    await closeMongo(connection);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `privacy-sample-data failed: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
