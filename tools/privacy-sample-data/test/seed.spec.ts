import {
  AUDIT_COLLECTION,
  createDefinitionRepository,
  createGrantRepository,
  createJournal,
  createPartRepository,
  createRepresentationRepository,
  createSettingRepository,
  ensureJournalIndexes,
  type Journal,
} from '@nhp/privacy-data-access';
import {
  BUILT_IN_PART,
  findTemplate,
  YOUTH_APP_DEFINITION_GUID,
  YOUTH_APP_TEMPLATE_GUID,
} from '@nhp/privacy-domain';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  SAMPLE_CITIZENS,
  SAMPLE_CLIENT_ID,
  SAMPLE_DEFINITIONS,
  SAMPLE_PART,
} from '../src/sample-data';
import { seedPrivacySampleData } from '../src/seed';

const infra = useTestInfra();
const logger = createLogger({ name: 'seed-test', level: 'silent' });

describe('privacy sample data', () => {
  let connection: Connection;
  let journal: Journal;
  beforeAll(async () => {
    connection = await connectMongo({ uri: infra.get().mongoUri, logger });
    await ensureJournalIndexes(connection);
    journal = createJournal({ connection, logger });
    // privacy-api creates the built-in party and youth-app definition at start, before the dev
    // stack seeds; here the test does.
    const audit = { actor: { kind: 'admin' as const, id: 'test' } };
    const template = findTemplate(YOUTH_APP_TEMPLATE_GUID);
    if (!template) throw new Error('no youth-app template');
    await createPartRepository({ connection, journal }).ensure({ ...BUILT_IN_PART }, audit);
    await createDefinitionRepository({ connection, journal }).ensure(
      {
        definisjonGuid: YOUTH_APP_DEFINITION_GUID,
        definisjonMalGuid: template.definisjonMalGuid,
        partKode: BUILT_IN_PART.partKode,
        navn: 'Ungdomsapp',
        beskrivelse: null,
        visning: null,
        fullstendigTekstInnhold: null,
        kravTilLesingAvFullstendigTekst: false,
        sortering: null,
        replikering: false,
        relasjoner: [],
        status: 'aktiv',
        typePi: template.typePi,
        fasteMetadata: template.fasteMetadata,
        takesPeriods: template.takesPeriods,
      },
      audit,
    );
  });
  afterAll(async () => {
    await journal.stop();
    await closeMongo(connection);
  });

  it('when seeded twice, then the data is there and the second run writes nothing', async () => {
    const first = await seedPrivacySampleData({ connection, journal });
    expect(first).toMatchObject({
      part: true,
      definitions: 4,
      grant: true,
      settings: 4,
      youthAppConsents: 1,
      inclusions: 1,
    });
    expect(first.representationCallers).toBe(3);
    const auditAfterFirst = await connection.collection(AUDIT_COLLECTION).countDocuments();

    const second = await seedPrivacySampleData({ connection, journal });
    expect(second).toEqual({
      part: false,
      definitions: 0,
      grant: false,
      settings: 0,
      youthAppConsents: 0,
      inclusions: 0,
      representationCallers: 0,
    });
    expect(await connection.collection(AUDIT_COLLECTION).countDocuments()).toBe(auditAfterFirst);

    const definitions = createDefinitionRepository({ connection, journal });
    for (const d of Object.values(SAMPLE_DEFINITIONS)) {
      expect(await definitions.findDefinition(d.definisjonGuid)).toMatchObject({
        partKode: SAMPLE_PART.partKode,
        typePi: d.typePi,
      });
    }
    const grants = createGrantRepository({ connection, journal });
    expect(await grants.allows(SAMPLE_CLIENT_ID, SAMPLE_PART.partKode, 'write')).toBe(true);
    const representation = createRepresentationRepository({ connection, journal });
    expect(await representation.findRelationships(SAMPLE_CITIZENS.kari)).toHaveLength(4);
    const settings = createSettingRepository({ connection, journal });
    expect(await settings.find(SAMPLE_CITIZENS.emma, YOUTH_APP_DEFINITION_GUID)).toMatchObject({
      aktiv: true,
      sekvensnummer: 1,
    });
    expect(
      await settings.find(
        SAMPLE_CITIZENS.ola,
        SAMPLE_DEFINITIONS.tilgangsbegrensning.definisjonGuid,
      ),
    ).toMatchObject({ aktiv: true, typePi: 'tilgangsbegrensning' });
  });
});
