import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AUDIT_COLLECTION,
  createJournal,
  createPartRepository,
  grantId,
  GRANTS_COLLECTION,
  PRIVACY_CACHE_SUBJECT,
} from '@nhp/privacy-data-access';
import { writeDevStack } from '@nhp/shared-config';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import { freePort, useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import { run } from '../src/main';

const infra = useTestInfra();
const logger = createLogger({ name: 'privacy-admin-test', level: 'silent' });

async function adminWith(env: NodeJS.ProcessEnv, argv: string[]) {
  let out = '';
  let err = '';
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t), env });
  return { code, out, err };
}

const admin = (...argv: string[]) =>
  adminWith({ MONGO_URL: infra.get().mongoUri, NATS_URL: infra.get().natsUrl }, argv);

/** A stand-in for privacy-api's cache: what it hears on the announcement subject. */
async function listener(natsUrl: string) {
  const nc: NatsConnection = await connect({ servers: natsUrl });
  const heard: unknown[] = [];
  nc.subscribe(PRIVACY_CACHE_SUBJECT, {
    callback: (_e, m) => {
      heard.push(m.json());
    },
  });
  await nc.flush();
  return { heard, close: () => nc.close() };
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

  it('when a grant is given or revoked, then the change is announced to running privacy-api instances over NATS, without a warning', async () => {
    const api = await listener(infra.get().natsUrl);
    try {
      const granted = await admin('grant', '--client', 'announced', '--part', 'kommune');
      const revoked = await admin('revoke', '--client', 'announced', '--part', 'kommune');
      expect([granted.code, granted.err, revoked.code, revoked.err]).toEqual([0, '', 0, '']);
      const key = grantId('announced', 'kommune');
      expect(api.heard).toEqual([
        { kind: 'grant', key },
        { kind: 'grant', key },
      ]);
    } finally {
      await api.close();
    }
  });

  it('when NATS cannot be reached, then the grant is made and it says loudly that privacy-api may answer the old way for up to 5 s', async () => {
    const nowhere = `nats://127.0.0.1:${await freePort()}`;
    const res = await adminWith({ MONGO_URL: infra.get().mongoUri, NATS_URL: nowhere }, [
      'grant',
      '--client',
      'unannounced',
      '--part',
      'kommune',
    ]);
    expect(res.code).toBe(0);
    expect(res.out).toBe('granted: client unannounced on part kommune: read, write\n');
    expect(res.err).toContain(`could not reach NATS at ${nowhere} (from NATS_URL)`);
    expect(res.err).toContain('may answer the old way for up to 5 s');
  });

  it('when no privacy-api listens on the NATS it reached, then it says the change may not be seen for up to 5 s', async () => {
    const res = await admin('grant', '--client', 'unheard', '--part', 'kommune');
    expect(res.code).toBe(0);
    expect(res.err).toContain(`no privacy-api listens on NATS at ${infra.get().natsUrl}`);
    expect(res.err).toContain('up to 5 s');
    // A command that changes nothing cached announces nothing, and warns of nothing.
    expect((await admin('grants')).err).toBe('');
  });

  it('when neither MONGO_URL nor NATS_URL is set and npm start runs, then it uses npm start’s MongoDB and NATS', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'privacy-admin-stack-'));
    const api = await listener(infra.get().natsUrl);
    try {
      await writeDevStack(dir, { mongoUrl: infra.get().mongoUri, natsUrl: infra.get().natsUrl });
      const res = await adminWith({ DEV_DATA_DIR: dir }, [
        'grant',
        '--client',
        'found',
        '--part',
        'sykehus',
        '--read',
      ]);
      expect(res).toEqual({
        code: 0,
        out: 'granted: client found on part sykehus: read\n',
        err: '',
      });
      expect(api.heard).toEqual([{ kind: 'grant', key: grantId('found', 'sykehus') }]);
      expect(
        await connection.collection(GRANTS_COLLECTION).countDocuments({ clientId: 'found' }),
      ).toBe(1);
    } finally {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('when the audit of a citizen has nothing, then it says so', async () => {
    const res = await admin('audit', '--fnr', '13116900216');
    expect(res).toMatchObject({ code: 0, out: 'no audit records\n' });
  });
});
