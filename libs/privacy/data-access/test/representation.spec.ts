import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { useTestInfra } from '@nhp/shared-testing';
import type { RepresentationRelationship } from '@nhp/privacy-domain';
import type { Connection } from 'mongoose';
import {
  createJournal,
  createRepresentationRepository,
  ensureJournalIndexes,
  REPRESENTATION_COLLECTION,
  type Journal,
} from '../src';

const infra = useTestInfra();
const logger = createLogger({ name: 'representation-test', level: 'silent' });

function rel(annenFnr: string, type = 'foreldre'): RepresentationRelationship {
  return {
    annenFnr,
    eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    fornavn: 'Kari',
    mellomnavn: null,
    etternavn: 'Nordmann',
    representasjonsforholdType: type,
    annenAdresse: false,
  };
}

describe('representation repository', () => {
  let conn: Connection;
  let journal: Journal;
  beforeAll(async () => {
    conn = await connectMongo({ uri: infra.get().mongoUri, logger });
    await ensureJournalIndexes(conn);
    journal = createJournal({ connection: conn, logger });
  });
  afterAll(async () => {
    await journal.stop();
    await closeMongo(conn);
  });

  it('when a caller has nothing, then the list is empty', async () => {
    const repo = createRepresentationRepository({ connection: conn, journal });
    expect(await repo.findRelationships('13116900216')).toEqual([]);
  });

  it('when an import names a caller again, then its list is replaced and other callers keep theirs', async () => {
    const repo = createRepresentationRepository({ connection: conn, journal });
    const at = new Date('2026-01-01T00:00:00Z');
    await repo.replaceRelationships(
      new Map([
        ['13116900216', [rel('01010012356'), rel('01010012356', 'fullmakt')]],
        ['01010012356', [rel('13116900216', 'verge')]],
      ]),
      { importId: 'import-1', at, actorId: 'test' },
    );
    await repo.replaceRelationships(new Map([['13116900216', [rel('01010012356', 'verge')]]]), {
      importId: 'import-2',
      at: new Date('2026-01-02T00:00:00Z'),
      actorId: 'test',
    });
    await journal.idle();

    expect(
      (await repo.findRelationships('13116900216')).map((r) => r.representasjonsforholdType),
    ).toEqual(['verge']);
    expect(await repo.findRelationships('01010012356')).toEqual([rel('13116900216', 'verge')]);
    const audit = await journal.listAudit({ fnr: '13116900216' });
    expect(audit.map((a) => [a.operation, a.requestId])).toEqual([
      ['representation.import', 'import-1'],
      ['representation.import', 'import-2'],
    ]);
    const raw = await conn
      .collection(REPRESENTATION_COLLECTION)
      .findOne({ _id: '13116900216' as never });
    expect(raw?.['journal']).toEqual([]);
  });
});
