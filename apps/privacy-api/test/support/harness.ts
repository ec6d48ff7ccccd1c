/**
 * The privacy-api test harness: the real app on real infrastructure (MongoDB wire protocol and a
 * nats-server from @nhp/shared-testing), real tokens from a TestIssuer, and helpers that seed
 * parties, definitions and grants through the same repositories the app uses.
 *
 *   const h = usePrivacyHarness();
 *   it('...', async () => {
 *     const part = await h.get().seedPart();
 *     const def = await h.get().seedDefinition({ partKode: part.partKode });
 *     const token = await h.get().token({ clientId: 'acme', scopes: ['write'] });
 *     await h.get().grant('acme', part.partKode, { write: true });
 *     await request(h.get().app).post('/...').set('Authorization', `Bearer ${token}`).send({...});
 *   });
 */
import { randomUUID } from 'node:crypto';
import { createPrivacyAuth, type PrivacyAuth, type PrivacyAuthOptions } from '@nhp/privacy-auth';
import { ensureJournalIndexes, type AuditContext, type Part } from '@nhp/privacy-data-access';
import { findTemplate, type Definition, type DefinitionStatus } from '@nhp/privacy-domain';
import { createTestIssuer, type MintOptions, type TestIssuer } from '@nhp/privacy-testing';
import { createHealth, type Health } from '@nhp/shared-health';
import { createLogger, type Logger } from '@nhp/shared-logger';
import {
  connectNats,
  drainNats,
  natsIsConnected,
  type NatsConnection,
} from '@nhp/shared-messaging';
import { closeMongo, connectMongo, mongoIsConnected, mongoPing } from '@nhp/shared-persistence';
import {
  LogCapture as SharedLogCapture,
  startTestInfra,
  type TestInfra,
} from '@nhp/shared-testing';
import type { Express } from 'express';
import type { Connection } from 'mongoose';
import { createApp } from '../../src/app';
import { ensureBuiltIns } from '../../src/bootstrap';
import { createPrivacyContext, type PrivacyContext, type PrivacyOptions } from '../../src/context';
import type { PrivacyApiMetrics } from '../../src/metrics';
import { definitionFromTemplate } from '../../src/definitions/definition-use-cases';

/** Template GUIDs (the decisions' table), by what they make. */
export const TEMPLATES = {
  samtykke: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01',
  reservasjon: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02',
  tilgangsbegrensning: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e03',
  samtykkeMedPerioder: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e04',
} as const;

/** The client id tokens get unless a test says otherwise. */
export const TEST_CLIENT = 'test-client';
const SEEDER: AuditContext = { actor: { kind: 'admin', id: 'test-harness' } };

/** Log lines as parsed JSON objects (the shared capture, named after this app). */
export class LogCapture extends SharedLogCapture {
  constructor(level = 'info') {
    super(level, 'privacy-api-test');
  }
}

export interface HarnessOptions {
  /** App behaviour (base path, debug, synthetic ids, page size). */
  options?: Partial<PrivacyOptions>;
  /** The business clock (audit times, tidspunkt defaults). Default: the real time. */
  clock?: () => Date;
  /** Default 0: definitions and grants are read from the database on every request. */
  cacheTtlMs?: number;
  /** Extra options for the token check (a clock, DPoP settings, ...). */
  auth?: Partial<PrivacyAuthOptions>;
  /** Default: a silent logger. Pass LogCapture's logger to inspect log lines. */
  logger?: Logger;
  /** Metrics wired as main.ts wires them (event counters, gauges); default: the app's own. */
  metrics?: PrivacyApiMetrics;
}

export interface PrivacyHarness {
  app: Express;
  context: PrivacyContext;
  /** The token check `app` uses (for building the app another way, e.g. with its fast path). */
  auth: PrivacyAuth;
  health: Health;
  issuer: TestIssuer;
  connection: Connection;
  nats: NatsConnection;
  infra: TestInfra;
  /** A system token: client `test-client` with read and write unless told otherwise. */
  token(options?: MintOptions): Promise<string>;
  /** A system token with the admin scope. */
  adminToken(options?: MintOptions): Promise<string>;
  /** A token in a citizen's context (`pid`), no scope. */
  citizenToken(pid: string, options?: MintOptions): Promise<string>;
  /** `Bearer <token>`. */
  bearer(token: string): string;
  /** A new party (random partKode unless given). */
  seedPart(part?: Partial<Part>): Promise<Part>;
  /** A new definition (random GUID, a new party and the samtykke template unless given). */
  seedDefinition(fields?: SeedDefinition): Promise<Definition>;
  /** Sets a client's grant on a party (both rights unless given). */
  grant(
    clientId: string,
    partKode: string,
    rights?: { read?: boolean; write?: boolean },
  ): Promise<void>;
  /** Documents in a collection matching a filter ("nothing written" checks). */
  count(collection: string, filter?: Record<string, unknown>): Promise<number>;
  /** Waits until every audit relay started so far has finished. */
  journalIdle(): Promise<void>;
}

export interface SeedDefinition extends Partial<Omit<Definition, 'status' | 'typePi'>> {
  /** A template GUID (TEMPLATES); default samtykke. */
  template?: string;
  status?: DefinitionStatus;
}

const randomPartKode = () => `part-${randomUUID().slice(0, 8)}`;

/**
 * Jest wiring: infrastructure, connections, the context (built-ins created) and the app before
 * the file's tests; everything closed after them. Read it inside tests or hooks (`h.get()`).
 */
export function usePrivacyHarness(harnessOptions: HarnessOptions = {}): { get(): PrivacyHarness } {
  let harness: PrivacyHarness | undefined;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const logger =
      harnessOptions.logger ?? createLogger({ name: 'privacy-api-test', level: 'silent' });
    const infra = await startTestInfra();
    const connection = await connectMongo({ uri: infra.mongoUri, logger });
    const nats = await connectNats({
      servers: infra.natsUrl,
      name: 'privacy-api-test',
      logger,
      reconnectTimeWaitMs: 100,
    });
    cleanup = async () => {
      await context.journal.stop();
      await drainNats(nats).catch(() => undefined);
      await closeMongo(connection);
      await infra.stop();
    };
    const context = createPrivacyContext({
      logger,
      connection,
      nats,
      clock: harnessOptions.clock,
      options: harnessOptions.options,
      cacheTtlMs: harnessOptions.cacheTtlMs ?? 0,
      events: harnessOptions.metrics?.events,
    });
    harnessOptions.metrics?.watch({
      mongodb: () => mongoIsConnected(connection),
      nats: () => natsIsConnected(nats),
      backlog: () => context.journal.backlog(),
    });
    await ensureJournalIndexes(connection);
    await ensureBuiltIns(context);
    await Promise.all(Object.values(connection.models).map((model) => model.init()));

    const issuer = await createTestIssuer();
    const auth = createPrivacyAuth({ ...issuer.authOptions(), logger, ...harnessOptions.auth });
    const health = createHealth({
      checks: { mongo: () => mongoPing(connection), nats: () => natsIsConnected(nats) },
    });
    const app = createApp({
      context,
      health,
      authenticate: auth.authenticate,
      metrics: harnessOptions.metrics,
    });

    async function seedPart(part: Partial<Part> = {}): Promise<Part> {
      const seeded: Part = {
        partKode: part.partKode ?? randomPartKode(),
        navn: part.navn ?? 'Testpart',
        kortNavn: part.kortNavn ?? null,
        beskrivelse: part.beskrivelse ?? null,
        uri: part.uri ?? null,
      };
      await context.parts.create(seeded, SEEDER);
      return seeded;
    }

    harness = {
      app,
      context,
      auth,
      health,
      issuer,
      connection,
      nats,
      infra,
      token: (options = {}) =>
        issuer.mint({ clientId: TEST_CLIENT, scopes: ['read', 'write'], ...options }),
      adminToken: (options = {}) =>
        issuer.mint({ clientId: TEST_CLIENT, scopes: ['admin'], ...options }),
      citizenToken: (pid, options = {}) =>
        issuer.mint({ clientId: 'citizen-app', scopes: [], pid, ...options }),
      bearer: (token) => `Bearer ${token}`,
      seedPart,
      async seedDefinition(fields = {}) {
        const template = findTemplate(fields.template ?? TEMPLATES.samtykke);
        if (!template) throw new Error(`no template ${fields.template}`);
        const partKode = fields.partKode ?? (await seedPart()).partKode;
        const definition = definitionFromTemplate(template, {
          ...fields,
          definisjonGuid: fields.definisjonGuid ?? randomUUID(),
          partKode,
        });
        if (fields.status) definition.status = fields.status;
        await context.definitions.create(definition, SEEDER);
        return definition;
      },
      async grant(clientId, partKode, rights = {}) {
        const both = rights.read === undefined && rights.write === undefined;
        await context.grants.set(
          clientId,
          partKode,
          { read: both || rights.read === true, write: both || rights.write === true },
          SEEDER,
        );
      },
      count: (collection, filter = {}) => connection.collection(collection).countDocuments(filter),
      journalIdle: () => context.journal.idle(),
    };
  }, 60_000);

  afterAll(async () => {
    await cleanup?.();
  }, 60_000);

  return {
    get() {
      if (!harness) throw new Error('the harness is not started (use it inside tests or hooks)');
      return harness;
    },
  };
}
