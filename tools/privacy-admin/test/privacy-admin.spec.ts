import { connect } from '@nats-io/transport-node';
import {
  AUDIT_COLLECTION,
  createJournal,
  createPartRepository,
  grantId,
  GRANTS_COLLECTION,
  PRIVACY_CACHE_SUBJECT,
} from '@nhp/privacy-data-access';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import { run } from '../src/main';

const infra = useTestInfra();
const logger = createLogger({ name: 'privacy-admin-test', level: 'silent' });

async function admin(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await run(argv, {
    out: (t) => (out += t),
    err: (t) => (err += t),
    env: { MONGO_URL: infra.get().mongoUri, NATS_URL: infra.get().natsUrl },
  });
  return { code, out, err };
}

describe('privacy-admin', () => {
  let connection: Connection;

  beforeAll(async () => {
    connection = await connectMongo({ uri: infra.get().mongoUri, logger });
    const journal = createJournal({ connection, logger });
    const parts = createPartRepository({ connection, journal });
    for (const partKode of ['sykehus', 'kommune']) {
      await parts.create(
        { partKode, navn: partKode, kortNavn: null, beskrivelse: null, uri: null },
        { actor: { kind: 'admin', id: 'test' } },
      );
    }
    await journal.idle();
  });
  afterAll(async () => {
    await closeMongo(connection);
  });

  const grantCount = () => connection.collection(GRANTS_COLLECTION).countDocuments({});

  it('when asked for --help, then it lists every command and exits 0', async () => {
    const res = await admin('--help');
    expect(res.code).toBe(0);
    for (const name of ['grant', 'revoke', 'grants', 'audit']) expect(res.out).toContain(name);
  });

  it('when asked for a command’s --help, then it shows that command’s options', async () => {
    const res = await admin('grant', '--help');
    expect(res.code).toBe(0);
    expect(res.out).toContain('--client ID --part KODE [--read] [--write]');
  });

  it.each([
    [['frobnicate']],
    [['grant', '--part', 'sykehus']],
    [['grant', '--client', 'acme']],
    [['grant', '--client', 'acme', '--part', 'sykehus', '--admin']],
    [['grant', '--client', '', '--part', 'sykehus']],
    [['grant', '--client', 'acme', '--part', 'sykehus', 'extra']],
    [['revoke', '--client', 'acme']],
    [['audit']],
    [['audit', '--fnr', '123']],
    [['audit', '--fnr', '13116900216', '--part', 'sykehus']],
    [['audit', '--definisjon', 'nope']],
  ])('when the arguments are %j, then it exits 2 with usage and writes nothing', async (argv) => {
    const res = await admin(...argv);
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/Usage/);
    expect(await grantCount()).toBe(0);
  });

  it('when the party is unknown, then grant exits 1 and writes nothing', async () => {
    const res = await admin('grant', '--client', 'acme', '--part', 'no-such');
    expect(res.code).toBe(1);
    expect(res.err).toContain('no-such');
    expect(await grantCount()).toBe(0);
  });

  it('when a client is granted, listed, narrowed and revoked, then each step shows and is audited', async () => {
    let res = await admin('grant', '--client', 'acme', '--part', 'sykehus');
    expect(res).toMatchObject({
      code: 0,
      out: 'granted: client acme on part sykehus: read, write\n',
    });

    res = await admin('grant', '--client', 'acme', '--part', 'kommune', '--read');
    expect(res.out).toContain('kommune: read\n');

    res = await admin('grants', '--client', 'acme', '--json');
    expect(JSON.parse(res.out)).toEqual([
      expect.objectContaining({ clientId: 'acme', partKode: 'kommune', read: true, write: false }),
      expect.objectContaining({ clientId: 'acme', partKode: 'sykehus', read: true, write: true }),
    ]);

    res = await admin('grant', '--client', 'acme', '--part', 'sykehus', '--write');
    res = await admin('grants');
    expect(res.out).toMatch(/^acme\tsykehus\twrite\t/m);

    res = await admin('revoke', '--client', 'acme', '--part', 'sykehus');
    expect(res).toMatchObject({ code: 0, out: 'revoked: client acme on part sykehus\n' });
    res = await admin('revoke', '--client', 'acme', '--part', 'sykehus');
    expect(res.out).toContain('nothing to revoke');

    res = await admin('grants', '--client', 'acme');
    expect(res.out).not.toContain('sykehus');

    res = await admin('audit', '--part', 'sykehus', '--json');
    const operations = (
      JSON.parse(res.out) as Array<{ operation: string; actor: { kind: string } }>
    ).map((r) => `${r.actor.kind} ${r.operation}`);
    expect(operations).toEqual([
      'admin part.create',
      'admin grant.set',
      'admin grant.set',
      'admin grant.revoke',
    ]);
    expect(
      await connection
        .collection(AUDIT_COLLECTION)
        .countDocuments({ 'target.partKode': 'sykehus' }),
    ).toBe(4);
  });

  it('when a grant is given or revoked, then the change is announced to running privacy-api instances over NATS', async () => {
    const nc = await connect({ servers: infra.get().natsUrl });
    try {
      const heard: unknown[] = [];
      const sub = nc.subscribe(PRIVACY_CACHE_SUBJECT, {
        callback: (_e, m) => {
          heard.push(m.json());
        },
      });
      await nc.flush();
      expect((await admin('grant', '--client', 'announced', '--part', 'kommune')).code).toBe(0);
      expect((await admin('revoke', '--client', 'announced', '--part', 'kommune')).code).toBe(0);
      await nc.flush();
      for (let i = 0; i < 50 && heard.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      sub.unsubscribe();
      const key = grantId('announced', 'kommune');
      expect(heard).toEqual([
        { kind: 'grant', key },
        { kind: 'grant', key },
      ]);
    } finally {
      await nc.close();
    }
  });

  it('when the audit of a citizen has nothing, then it says so', async () => {
    const res = await admin('audit', '--fnr', '13116900216');
    expect(res).toMatchObject({ code: 0, out: 'no audit records\n' });
  });
});
