import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { useTestInfra } from '@nhp/shared-testing';
import type { InclusionChange } from '@nhp/privacy-domain';
import type { Connection } from 'mongoose';
import {
  createInclusionRepository,
  createJournal,
  ensureJournalIndexes,
  INCLUSIONS_COLLECTION,
  inclusionKey,
  type Journal,
} from '../src';

const infra = useTestInfra();
const logger = createLogger({ name: 'inclusions-test', level: 'silent' });
const DEF = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('inclusion repository', () => {
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

  let n = 0;
  function change(extra: Partial<InclusionChange> = {}): InclusionChange {
    n += 1;
    return {
      innbyggerFnr: '13116900216',
      definisjonGuid: DEF,
      partKode: 'studie',
      inkluderingType: 'Inkludert',
      aktiv: true,
      actor: { clientId: 'client-a', isAdmin: false },
      requestId: `req-${n}`,
      at: new Date(Date.UTC(2026, 0, 1, 0, n)),
      ...extra,
    };
  }

  it('when an inclusion is set, changed and ended, then the state is the last, every change is in the history and the audit', async () => {
    const repo = createInclusionRepository({ connection: conn, journal });
    const fnr = '01010012356';
    expect(
      await repo.setInclusion(change({ innbyggerFnr: fnr, inkluderingType: 'Oppfort' })),
    ).toEqual({
      changed: true,
    });
    expect(
      await repo.setInclusion(change({ innbyggerFnr: fnr, inkluderingType: 'Inkludert' })),
    ).toEqual({
      changed: true,
    });
    expect(await repo.setInclusion(change({ innbyggerFnr: fnr, aktiv: false }))).toEqual({
      changed: true,
    });
    await journal.idle();

    const stored = await repo.find(fnr, DEF);
    expect(stored).toMatchObject({
      inkluderingType: 'Inkludert',
      aktiv: false,
      partKode: 'studie',
    });
    expect(stored?.history.map((h) => [h.inkluderingType, h.aktiv])).toEqual([
      ['Oppfort', true],
      ['Inkludert', true],
      ['Inkludert', false],
    ]);
    expect(stored?.opprettetTidspunkt.getTime()).toBeLessThan(
      stored?.sistEndretTidspunkt.getTime() ?? 0,
    );
    const audit = await journal.listAudit({ fnr });
    expect(audit.map((a) => a.operation)).toEqual([
      'inclusion.set',
      'inclusion.set',
      'inclusion.end',
    ]);
    expect(audit[0]).toMatchObject({
      actor: { kind: 'client', id: 'client-a' },
      target: { definisjonGuid: DEF, partKode: 'studie' },
      relayed: true,
    });
    const raw = await conn
      .collection(INCLUSIONS_COLLECTION)
      .findOne({ _id: inclusionKey(fnr, DEF) as never });
    expect(raw?.['journal']).toEqual([]);
  });

  it('when the same state is set again, then nothing is written', async () => {
    const repo = createInclusionRepository({ connection: conn, journal });
    const fnr = '13116900216';
    await repo.setInclusion(
      change({ innbyggerFnr: fnr, definisjonGuid: 'a0000000-0000-0000-0000-000000000001' }),
    );
    expect(
      await repo.setInclusion(
        change({ innbyggerFnr: fnr, definisjonGuid: 'a0000000-0000-0000-0000-000000000001' }),
      ),
    ).toEqual({ changed: false });
    await journal.idle();
    expect((await repo.find(fnr, 'a0000000-0000-0000-0000-000000000001'))?.history).toHaveLength(1);
  });

  it('when several changes of one inclusion race, then each lands once and the state is one of them', async () => {
    const repo = createInclusionRepository({ connection: conn, journal });
    const guid = 'a0000000-0000-0000-0000-000000000002';
    const types = ['Inkludert', 'Deltager', 'Oppfort'] as const;
    const results = await Promise.all(
      types.map((t) => repo.setInclusion(change({ definisjonGuid: guid, inkluderingType: t }))),
    );
    await journal.idle();
    const stored = await repo.find('13116900216', guid);
    const changed = results.filter((r) => r.changed).length;
    expect(stored?.history).toHaveLength(changed);
    expect(stored?.history.at(-1)?.inkluderingType).toBe(stored?.inkluderingType);
    const audit = (await journal.listAudit({ definisjonGuid: guid })).length;
    expect(audit).toBe(changed);
  });
});
