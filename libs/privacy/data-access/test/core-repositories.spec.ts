import { randomUUID } from 'node:crypto';
import { findTemplate, type Definition } from '@nhp/privacy-domain';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  AUDIT_COLLECTION,
  createDefinitionRepository,
  createGrantRepository,
  createJournal,
  createPartRepository,
  ensureJournalIndexes,
  GRANTS_COLLECTION,
  PARTS_COLLECTION,
  type AuditContext,
  type Journal,
} from '../src';

const infra = useTestInfra();
const logger = createLogger({ name: 'core-repositories-test', level: 'silent' });
const AUDIT: AuditContext = { actor: { kind: 'admin', id: 'test' }, requestId: 'r-1' };

function definition(partKode: string, overrides: Partial<Definition> = {}): Definition {
  const template = findTemplate('7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01');
  if (!template) throw new Error('template');
  return {
    definisjonGuid: randomUUID(),
    definisjonMalGuid: template.definisjonMalGuid,
    partKode,
    navn: 'n',
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
    takesPeriods: false,
    ...overrides,
  };
}

const part = (partKode: string) => ({
  partKode,
  navn: null,
  kortNavn: null,
  beskrivelse: null,
  uri: null,
});

describe('parts, definitions and grants repositories', () => {
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

  it('when the same party is created ten times at once, then exactly one succeeds and one audit record exists', async () => {
    const parts = createPartRepository({ connection: conn, journal });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => parts.create(part('race'), AUDIT)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('EPVK-102409');
    }
    await journal.idle();
    expect(
      await conn.collection(AUDIT_COLLECTION).countDocuments({ 'target.partKode': 'race' }),
    ).toBe(1);
    const stored = await conn.collection(PARTS_COLLECTION).findOne({ _id: 'race' as never });
    expect(stored?.['journal']).toEqual([]);
  });

  it('when a built-in is ensured twice, then it is created once and never overwritten', async () => {
    const parts = createPartRepository({ connection: conn, journal });
    expect(await parts.ensure({ ...part('builtin'), navn: 'first' }, AUDIT)).toBe(true);
    expect(await parts.ensure({ ...part('builtin'), navn: 'second' }, AUDIT)).toBe(false);
    expect((await parts.find('builtin'))?.navn).toBe('first');
  });

  it('when several replicas ensure the same built-ins at once, then each is created once', async () => {
    const parts = createPartRepository({ connection: conn, journal });
    const definitions = createDefinitionRepository({ connection: conn, journal });
    const d = definition('builtin-race');
    const created = await Promise.all(
      Array.from({ length: 8 }, async () => [
        await parts.ensure(part('builtin-race'), AUDIT),
        await definitions.ensure(d, AUDIT),
      ]),
    );
    expect(created.filter(([p]) => p)).toHaveLength(1);
    expect(created.filter(([, x]) => x)).toHaveLength(1);
    await journal.idle();
    expect(
      await conn.collection(AUDIT_COLLECTION).countDocuments({ 'target.partKode': 'builtin-race' }),
    ).toBe(2);
  });

  it('when a definition changes through the repository, then its cached read is dropped at once', async () => {
    const definitions = createDefinitionRepository({
      connection: conn,
      journal,
      cacheTtlMs: 60_000,
    });
    const d = definition('p-cache');
    await definitions.create(d, AUDIT);
    expect((await definitions.findDefinition(d.definisjonGuid.toUpperCase()))?.status).toBe(
      'aktiv',
    );
    await definitions.update(d.definisjonGuid, { status: 'inaktiv', sortering: 4 }, AUDIT);
    expect(await definitions.findDefinition(d.definisjonGuid)).toMatchObject({
      status: 'inaktiv',
      sortering: 4,
    });
  });

  it('when another process changes a definition, then this one serves its cached copy until the entry is dropped', async () => {
    const mine = createDefinitionRepository({ connection: conn, journal, cacheTtlMs: 60_000 });
    const theirs = createDefinitionRepository({ connection: conn, journal, cacheTtlMs: 0 });
    const d = definition('p-stale');
    await theirs.create(d, AUDIT);
    await mine.findDefinition(d.definisjonGuid);
    await theirs.update(d.definisjonGuid, { status: 'inaktiv' }, AUDIT);
    expect((await mine.findDefinition(d.definisjonGuid))?.status).toBe('aktiv');
    mine.clearCache();
    expect((await mine.findDefinition(d.definisjonGuid))?.status).toBe('inaktiv');
  });

  it('when relations are checked, then only the missing ids come back, in lower case', async () => {
    const definitions = createDefinitionRepository({ connection: conn, journal });
    const d = definition('p-rel');
    await definitions.create(d, AUDIT);
    const unknown = randomUUID().toUpperCase();
    expect(await definitions.missing([d.definisjonGuid.toUpperCase(), unknown])).toEqual([
      unknown.toLowerCase(),
    ]);
  });

  it('when a part’s definitions are listed, then they come without the journal, in a stable order', async () => {
    const definitions = createDefinitionRepository({ connection: conn, journal });
    const a = definition('p-list');
    const b = definition('p-list');
    await definitions.create(a, AUDIT);
    await definitions.create(b, AUDIT);
    const listed = await definitions.listDefinitionsOfPart('p-list');
    expect(listed.map((x) => x.definisjonGuid)).toEqual(
      [a.definisjonGuid, b.definisjonGuid].sort(),
    );
    expect(listed[0]).not.toHaveProperty('journal');
  });

  it('when a grant is set, narrowed and revoked, then allows follows at once and each step is audited', async () => {
    const grants = createGrantRepository({ connection: conn, journal, cacheTtlMs: 60_000 });
    expect(await grants.allows('acme', 'p-g', 'read')).toBe(false);
    await grants.set('acme', 'p-g', { read: true, write: true }, AUDIT);
    expect(await grants.allows('acme', 'p-g', 'read')).toBe(true);
    await grants.set('acme', 'p-g', { read: false, write: true }, AUDIT);
    expect(await grants.allows('acme', 'p-g', 'read')).toBe(false);
    expect(await grants.allows('acme', 'p-g', 'write')).toBe(true);
    expect(await grants.revoke('acme', 'p-g', AUDIT)).toBe(true);
    expect(await grants.revoke('acme', 'p-g', AUDIT)).toBe(false);
    expect(await grants.allows('acme', 'p-g', 'write')).toBe(false);
    expect(await grants.list({ clientId: 'acme' })).toEqual([]);
    await journal.idle();
    const operations = (await journal.listAudit({ partKode: 'p-g' })).map((r) => r.operation);
    expect(operations).toEqual(['grant.set', 'grant.set', 'grant.revoke']);
    expect(await conn.collection(GRANTS_COLLECTION).countDocuments({ partKode: 'p-g' })).toBe(1);
  });

  it('when client ids and party codes hold separators, then grants stay apart', async () => {
    const grants = createGrantRepository({ connection: conn, journal, cacheTtlMs: 0 });
    await grants.set('a/b', 'c', { read: true, write: false }, AUDIT);
    expect(await grants.allows('a', 'b/c', 'read')).toBe(false);
    expect(await grants.allows('a/b', 'c', 'read')).toBe(true);
  });
});
