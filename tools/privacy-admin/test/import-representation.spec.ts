import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AUDIT_COLLECTION,
  createJournal,
  createRepresentationRepository,
  REPRESENTATION_COLLECTION,
} from '@nhp/privacy-data-access';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import { run } from '../src/main';

const infra = useTestInfra();
const logger = createLogger({ name: 'import-test', level: 'silent' });

const KARI = '13116900216';
const OLA = '01010012356';
const CHILD = '01891250009'; // synthetic (month + 80)

function line(value: Record<string, unknown> = {}): string {
  return JSON.stringify({
    fnr: KARI,
    annenFnr: OLA,
    eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    fornavn: 'Ola',
    etternavn: 'Nordmann',
    representasjonsforholdType: 'fullmakt',
    ...value,
  });
}

describe('privacy-admin import-representation', () => {
  let dir: string;
  let connection: Connection;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'import-representation-'));
    connection = await connectMongo({ uri: infra.get().mongoUri, logger });
  });
  afterAll(async () => {
    await closeMongo(connection);
    await rm(dir, { recursive: true, force: true });
  });

  async function importFile(
    name: string,
    lines: string[],
    env: Record<string, string> = {},
  ): Promise<{ code: number; out: string; err: string }> {
    const file = join(dir, name);
    await writeFile(file, `${lines.join('\n')}\n`);
    let out = '';
    let err = '';
    const code = await run(['import-representation', file], {
      out: (t) => (out += t),
      err: (t) => (err += t),
      env: {
        MONGO_URL: infra.get().mongoUri,
        NATS_URL: infra.get().natsUrl,
        NODE_ENV: 'test',
        ...env,
      },
    });
    return { code, out, err };
  }

  const relationshipsOf = (fnr: string) =>
    createRepresentationRepository({
      connection,
      journal: createJournal({ connection, logger }),
    }).findRelationships(fnr);

  it('when every line is good, then each caller’s list is stored and audited, and a re-run changes nothing', async () => {
    const lines = [
      line(),
      line({
        annenFnr: CHILD,
        fornavn: 'Emma',
        representasjonsforholdType: 'foreldre',
        annenAdresse: true,
      }),
      line({ fnr: OLA, annenFnr: KARI, fornavn: 'Kari', mellomnavn: 'M' }),
    ];
    const first = await importFile('good.ndjson', lines);
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out).toContain('2 caller(s) replaced');
    expect(first.out).not.toContain(KARI);

    expect((await relationshipsOf(KARI)).map((r) => [r.fornavn, r.annenAdresse])).toEqual([
      ['Ola', false],
      ['Emma', true],
    ]);
    expect(await relationshipsOf(OLA)).toEqual([
      expect.objectContaining({ fornavn: 'Kari', mellomnavn: 'M', annenFnr: KARI }),
    ]);
    const audited = await connection
      .collection(AUDIT_COLLECTION)
      .countDocuments({ operation: 'representation.import' });
    expect(audited).toBe(2);

    const again = await importFile('good.ndjson', lines);
    expect(again.out).toContain('0 caller(s) replaced');
    expect(
      await connection
        .collection(AUDIT_COLLECTION)
        .countDocuments({ operation: 'representation.import' }),
    ).toBe(2);
  });

  it('when a later file names a caller, then that caller’s list is replaced and other callers keep theirs', async () => {
    await importFile('first.ndjson', [line({ fnr: '15868410024', annenFnr: CHILD })]);
    await importFile('second.ndjson', [
      line({ fnr: '15868410024', annenFnr: OLA, representasjonsforholdType: 'verge' }),
    ]);
    expect((await relationshipsOf('15868410024')).map((r) => r.representasjonsforholdType)).toEqual(
      ['verge'],
    );
    expect(await relationshipsOf(KARI)).toHaveLength(2);
  });

  it('when lines are bad, then each is reported by its number, exit 1, and nothing of the file is applied', async () => {
    const before = await connection.collection(REPRESENTATION_COLLECTION).find().toArray();
    const result = await importFile('bad.ndjson', [
      line({ fnr: '03828610057' }),
      '{"fnr": ',
      line({ fnr: '03828610057', annenFnr: '13116950216' }),
      '',
      line({ fnr: '03828610057', extra: true }),
      line({ fnr: '03828610057', eksternProfilGuid: 'nope', representasjonsforholdType: 'x' }),
    ]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/4 bad line\(s\); nothing was imported/);
    for (const n of [2, 3, 5, 6]) expect(result.err).toContain(`line ${n}:`);
    expect(result.err).not.toContain('line 1:');
    expect(result.err).not.toContain('13116950216');
    expect(await connection.collection(REPRESENTATION_COLLECTION).find().toArray()).toEqual(before);
    expect(await relationshipsOf('03828610057')).toEqual([]);
  });

  it('when synthetic numbers are not allowed, then a line with one is bad', async () => {
    const result = await importFile(
      'synthetic.ndjson',
      [line({ fnr: '10815010030', annenFnr: CHILD })],
      {
        PRIVACY_ALLOW_SYNTHETIC_IDS: 'false',
      },
    );
    expect(result.code).toBe(1);
    expect(result.err).toContain('line 1: fnr: not a valid national identity number');
  });

  it('when the file is missing or no file is named, then a clear refusal', async () => {
    const io = {
      out: () => undefined,
      err: () => undefined,
      env: { MONGO_URL: infra.get().mongoUri, NATS_URL: infra.get().natsUrl },
    };
    expect(await run(['import-representation'], io)).toBe(2);
    expect(await run(['import-representation', 'a', 'b'], io)).toBe(2);
    expect(await run(['import-representation', join(dir, 'missing.ndjson')], io)).toBe(1);
  });
});
