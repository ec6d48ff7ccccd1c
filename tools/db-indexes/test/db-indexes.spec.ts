import { useTestInfra } from '@nhp/shared-testing';
import mongoose from 'mongoose';
import { runDbIndexes } from '../src/db-indexes';

const infra = useTestInfra();

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      env: { MONGO_URL: infra.get().mongoUri },
      out: (line: string) => out.push(line),
      err: (line: string) => err.push(line),
    },
  };
}

async function indexNames(collection: string): Promise<string[]> {
  const conn = await mongoose.createConnection(infra.get().mongoUri).asPromise();
  try {
    const indexes = await conn
      .collection(collection)
      .indexes()
      .catch((err: { codeName?: string }) => {
        if (err.codeName === 'NamespaceNotFound') return [];
        throw err;
      });
    return indexes.map((i) => String(i.name));
  } finally {
    await conn.close();
  }
}

describe('npm run db-indexes', () => {
  it('when the database is empty, then --check lists what is missing and exits 1, building nothing', async () => {
    const run = io();
    expect(await runDbIndexes(['--check'], run.io)).toBe(1);
    expect(run.out).toContain(
      'missing privacy_settings.fnr_definisjon {"innbyggerFnr":1,"definisjonGuid":1}',
    );
    expect(run.out.some((l) => l.startsWith('missing refsync_items.dataset_version_item'))).toBe(
      true,
    );
    expect(await indexNames('privacy_settings')).not.toContain('fnr_definisjon');
  });

  it('when run, then every app index is built once, and a second run and --check find nothing to do', async () => {
    const first = io();
    expect(await runDbIndexes([], first.io)).toBe(0);
    expect(first.out).toContain(
      'created privacy_settings.fnr_definisjon {"innbyggerFnr":1,"definisjonGuid":1}',
    );
    expect(await indexNames('privacy_settings')).toEqual(
      expect.arrayContaining(['fnr_definisjon', 'definisjon_paging']),
    );
    expect(await indexNames('privacy_audit')).toEqual(
      expect.arrayContaining(['fnr_at', 'definisjon_at', 'part_at']),
    );
    expect(await indexNames('refsync_importer_runs')).toEqual(
      expect.arrayContaining(['startedAt_desc']),
    );

    const second = io();
    expect(await runDbIndexes([], second.io)).toBe(0);
    expect(second.out).toEqual(['0 index(es) created; every declared index exists']);
    const check = io();
    expect(await runDbIndexes(['--check'], check.io)).toBe(0);
  });

  it('when an argument is unknown, then it exits 2 with the usage and touches nothing', async () => {
    const run = io();
    expect(await runDbIndexes(['--drop'], run.io)).toBe(2);
    expect(run.err.join('\n')).toContain('Usage: npm run db-indexes');
  });
});
