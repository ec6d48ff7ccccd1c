import type { Caller } from '@nhp/privacy-contracts';
import {
  createSettingsUseCases,
  findTemplate,
  type Definition,
  type SettingsUseCases,
} from '@nhp/privacy-domain';
import { syntheticFnr } from '@nhp/privacy-testing';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { present, useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  createJournal,
  createSettingRepository,
  ensureJournalIndexes,
  PENDING_COLLECTION,
  PROOFS_COLLECTION,
  SETTING_HISTORY_LIMIT,
  SETTINGS_COLLECTION,
  type Journal,
  type SettingRepository,
} from '../src';

const infra = useTestInfra();
const logger = createLogger({ name: 'settings-test', level: 'silent' });

const RESERVATION = present(
  findTemplate('7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02'),
  'the reservasjon template',
);
const DEF = '6f1d2c3b-0000-4000-8000-000000000001';
const PAGED_DEF = '6f1d2c3b-0000-4000-8000-000000000002';
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(64 * 1024, 7),
]);

function definition(definisjonGuid: string): Definition {
  return {
    definisjonGuid,
    definisjonMalGuid: RESERVATION.definisjonMalGuid,
    partKode: 'studie',
    navn: 'Reservasjon',
    beskrivelse: null,
    visning: null,
    fullstendigTekstInnhold: null,
    kravTilLesingAvFullstendigTekst: false,
    sortering: null,
    replikering: true,
    relasjoner: [],
    status: 'aktiv',
    typePi: RESERVATION.typePi,
    fasteMetadata: RESERVATION.fasteMetadata,
    takesPeriods: false,
  };
}

const actor: Caller = { clientId: 'client-a', isAdmin: false };

describe('settings storage', () => {
  let conn: Connection;
  let journal: Journal;
  let repo: SettingRepository;
  let service: SettingsUseCases;
  let pageSize = 10;

  beforeAll(async () => {
    conn = await connectMongo({ uri: infra.get().mongoUri, logger });
    await ensureJournalIndexes(conn);
    journal = createJournal({ connection: conn, logger });
    repo = createSettingRepository({ connection: conn, journal });
    await repo.ensureIndexes();
    const definitions = new Map([DEF, PAGED_DEF].map((g) => [g, definition(g)]));
    service = createSettingsUseCases({
      definitions: {
        findDefinition: async (g) => definitions.get(g),
        listDefinitionsOfPart: async (p) =>
          [...definitions.values()].filter((d) => d.partKode === p),
      },
      grants: { allows: async () => true },
      store: repo,
      now: () => new Date(),
      allowSyntheticIds: true,
      get pageSize() {
        return pageSize;
      },
    });
  });
  afterAll(async () => {
    await journal.stop();
    await closeMongo(conn);
  });

  const set = (innbyggerFnr: string, extra: Record<string, unknown> = {}) =>
    service.set(actor, {
      innbyggerFnr,
      definisjonGuid: DEF,
      partKode: 'studie',
      aktiv: true,
      ...extra,
    });

  it('when concurrent sets of one citizen race, then the writes that lost leave no journal pointer behind (none waits to go stale in the way of the sweeps)', async () => {
    const fnr = syntheticFnr(9003);
    await journal.idle();
    const pointers = () => conn.collection(PENDING_COLLECTION).countDocuments({});
    const before = await pointers();
    // Ten first sets at once: one creates, the others meet its duplicate key or a changed version.
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        set(fnr, { aktiv: i % 2 === 0, tidspunkt: `2026-01-01T00:00:0${i}Z` }),
      ),
    );
    expect(answers.every((a) => a.returKode === 'ok')).toBe(true);
    await journal.idle();
    expect(await pointers()).toBe(before);
  });

  it('when a setting is set and the same request comes again, then endret then ikkeEndret, sekvensnummer 1', async () => {
    const fnr = syntheticFnr(1);
    const request = { tidspunkt: '2026-01-01T00:00:00Z' };
    expect(await set(fnr, request)).toEqual({ returKode: 'ok', instansEndret: 'endret' });
    expect(await set(fnr, request)).toEqual({ returKode: 'ok', instansEndret: 'ikkeEndret' });
    const stored = await repo.findForWrite(fnr, DEF);
    expect(stored?.state.sekvensnummer).toBe(1);
    expect(stored?.history).toHaveLength(1);
  });

  it('when the same state comes dated later, then ikkeEndret and no sekvensnummer, but it is recorded and a change dated between arriving after it does not apply', async () => {
    const fnr = syntheticFnr(11);
    expect(await set(fnr, { tidspunkt: '2026-01-01T00:00:00Z' })).toMatchObject({
      instansEndret: 'endret',
    });
    expect(await set(fnr, { tidspunkt: '2026-01-01T00:20:00Z' })).toMatchObject({
      instansEndret: 'ikkeEndret',
    });
    expect(await set(fnr, { aktiv: false, tidspunkt: '2026-01-01T00:10:00Z' })).toMatchObject({
      instansEndret: 'ikkeEndret',
    });
    const stored = await repo.findForWrite(fnr, DEF);
    expect(stored?.state).toMatchObject({
      aktiv: true,
      sekvensnummer: 1,
      sistEndretTidspunkt: new Date('2026-01-01T00:00:00Z'),
      latestTidspunkt: new Date('2026-01-01T00:20:00Z'),
    });
    expect(stored?.history.map((e) => [e.applied, e.confirmed === true, e.sekvensnummer])).toEqual([
      [true, false, 1],
      [false, true, 1],
      [false, false, 1],
    ]);
    // Written with the state, so that every replica decides against it.
    const raw = await conn.collection(SETTINGS_COLLECTION).findOne({ innbyggerFnr: fnr });
    expect(raw?.['latestTidspunkt']).toEqual(new Date('2026-01-01T00:20:00Z'));
  });

  it('when a document was written before the latest request was kept, then its last change counts as the latest request', async () => {
    const fnr = syntheticFnr(12);
    await set(fnr, { tidspunkt: '2026-01-01T00:00:00Z' });
    await conn
      .collection(SETTINGS_COLLECTION)
      .updateOne(
        { innbyggerFnr: fnr, definisjonGuid: DEF },
        { $unset: { latestTidspunkt: '', latestProofSha256: '' } },
      );
    expect((await repo.find(fnr, DEF))?.latestTidspunkt).toEqual(new Date('2026-01-01T00:00:00Z'));
    // Older than the last change: kept but not applied; later: applied.
    expect(await set(fnr, { aktiv: false, tidspunkt: '2025-12-31T00:00:00Z' })).toMatchObject({
      instansEndret: 'ikkeEndret',
    });
    expect(await set(fnr, { aktiv: false, tidspunkt: '2026-01-02T00:00:00Z' })).toMatchObject({
      instansEndret: 'endret',
    });
    expect((await repo.find(fnr, DEF))?.latestTidspunkt).toEqual(new Date('2026-01-02T00:00:00Z'));
  });

  it('when many sets for one citizen and definition run at once, then their sekvensnummer values are consecutive and none is lost', async () => {
    const fnr = syntheticFnr(2);
    const base = Date.now() - 60_000;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        set(fnr, {
          aktiv: i % 2 === 0,
          tidspunkt: new Date(base + i).toISOString(),
          reInnbyggerMetadata: {
            tidsbegrensning: { perioder: [{ fraDato: new Date(base + i).toISOString() }] },
          },
        }),
      ),
    );
    const changed = results.filter((r) => r.instansEndret === 'endret').length;
    const stored = present(await repo.findForWrite(fnr, DEF), 'the setting');
    const applied = stored.history.filter((e) => e.applied);
    // Each request is recorded once: as a change, or (dated before a change that won) as superseded.
    expect(stored.history).toHaveLength(12);
    expect(applied.map((e) => e.sekvensnummer)).toEqual(
      Array.from({ length: changed }, (_, i) => i + 1),
    );
    expect(stored.state.sekvensnummer).toBe(changed);
  });

  it('when a proof comes with a change, then its bytes are stored apart and reads of the setting do not carry them', async () => {
    const fnr = syntheticFnr(3);
    const content = PNG.toString('base64');
    await set(fnr, { signertBevisMimeType: 'image/png', signertBevisInnhold: content });
    expect(
      await set(fnr, { signertBevisMimeType: 'image/png', signertBevisInnhold: content }),
    ).toEqual({ returKode: 'ok', instansEndret: 'ikkeEndret' });

    const raw = present(
      await conn.collection(SETTINGS_COLLECTION).findOne({ innbyggerFnr: fnr }),
      'the setting',
    );
    expect(JSON.stringify(raw).length).toBeLessThan(PNG.length);
    const proof = present(
      await conn.collection(PROOFS_COLLECTION).findOne({ settingId: raw['_id'] }),
      'the proof',
    );
    expect(Buffer.from(proof['bytes'].buffer).equals(PNG)).toBe(true);

    const listed = await service.uploadedProofs(actor, {
      innbyggerFnr: fnr,
      definisjonGuid: DEF,
      partKode: 'studie',
    });
    expect(listed.opplastedeBevis).toEqual([
      {
        sekvensnummer: 1,
        regsitrertTidspunkt: expect.any(String),
        historisk: false,
        signertBevisMimeType: 'image/png',
        signertBevisInnhold: content,
      },
    ]);
  });

  it('when a request is dated before the current state, then it is kept in history and the state does not change', async () => {
    const fnr = syntheticFnr(4);
    await set(fnr, { tidspunkt: '2026-01-02T00:00:00Z' });
    expect(await set(fnr, { aktiv: false, tidspunkt: '2026-01-01T00:00:00Z' })).toEqual({
      returKode: 'ok',
      instansEndret: 'ikkeEndret',
    });
    const stored = await repo.findForWrite(fnr, DEF);
    expect(stored?.state).toMatchObject({ aktiv: true, sekvensnummer: 1 });
    expect(stored?.history.map((e) => [e.applied, e.aktiv])).toEqual([
      [true, true],
      [false, false],
    ]);
    // The same old request replayed is recorded once.
    await set(fnr, { aktiv: false, tidspunkt: '2026-01-01T00:00:00Z' });
    expect((await repo.findForWrite(fnr, DEF))?.history).toHaveLength(2);
  });

  it('when a setting changes more often than the history keeps, then the document keeps the latest entries and the state goes on counting', async () => {
    const limit = 5;
    const small = createSettingRepository({ connection: conn, journal, historyLimit: limit });
    const smallService = createSettingsUseCases({
      definitions: {
        findDefinition: async () => definition(DEF),
        listDefinitionsOfPart: async () => [],
      },
      grants: { allows: async () => true },
      store: small,
      now: () => new Date(),
      allowSyntheticIds: true,
      pageSize: 10,
    });
    const fnr = syntheticFnr(5);
    const changes = limit + 3;
    for (let i = 0; i < changes; i++) {
      await smallService.set(actor, {
        innbyggerFnr: fnr,
        definisjonGuid: DEF,
        partKode: 'studie',
        aktiv: i % 2 === 0,
      });
    }
    const stored = await small.findForWrite(fnr, DEF);
    expect(stored?.state.sekvensnummer).toBe(changes);
    expect(stored?.history.map((e) => e.sekvensnummer)).toEqual([4, 5, 6, 7, 8]);
    expect(SETTING_HISTORY_LIMIT).toBeGreaterThanOrEqual(100);
  });

  it('when the active citizens are walked while others write, then no entry comes twice and every instance active throughout comes once', async () => {
    pageSize = 7;
    const setPaged = (fnr: string, aktiv: boolean) =>
      service.set(actor, {
        innbyggerFnr: fnr,
        definisjonGuid: PAGED_DEF,
        partKode: 'studie',
        aktiv,
      });
    const stable = Array.from({ length: 30 }, (_, i) => syntheticFnr(100 + i));
    const flapping = Array.from({ length: 10 }, (_, i) => syntheticFnr(200 + i));
    for (const fnr of [...stable, ...flapping]) await setPaged(fnr, true);

    const seen: string[] = [];
    let cursor = 0;
    let pages = 0;
    let extra = 0;
    do {
      const page = await service.activeCitizens(actor, {
        definisjonGuid: PAGED_DEF,
        pagingReference: cursor,
      });
      expect(page.reFasteMetadata).toBeDefined();
      seen.push(...page.personvernInnstillinger.map((e) => e.innbyggerFnr));
      cursor = page.pagingReference;
      pages += 1;
      // Writes between pages: new citizens, and citizens switching off and on again.
      await Promise.all([
        setPaged(syntheticFnr(300 + extra++), true),
        setPaged(present(flapping[pages % flapping.length], 'a flapping citizen'), pages % 2 === 0),
      ]);
    } while (cursor !== 0 && pages < 100);

    expect(pages).toBeGreaterThan(3);
    expect(new Set(seen).size).toBe(seen.length);
    for (const fnr of stable) expect(seen.filter((s) => s === fnr)).toHaveLength(1);
    pageSize = 10;
  });
});
