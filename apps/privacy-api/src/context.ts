import {
  announceChanges,
  createDefinitionRepository,
  createGrantRepository,
  createInclusionRepository,
  createJournal,
  createPartRepository,
  createRepresentationRepository,
  createSettingEventPublisher,
  createSettingRepository,
  type DefinitionRepository,
  type GrantRepository,
  type InclusionRepository,
  type Journal,
  type PartRepository,
  type RepresentationRepository,
  type SettingRepository,
} from '@nhp/privacy-data-access';
import type { Logger } from '@nhp/shared-logger';
import type { NatsConnection, StreamSpec } from '@nhp/shared-messaging';
import type { PublishObserver } from '@nhp/shared-outbox';
import type { Connection } from 'mongoose';

/** Behaviour the configuration decides (resolved from PRIVACY_* in main.ts; tests set them). */
export interface PrivacyOptions {
  /** Every route is also served under this prefix ('' for none). */
  basePath: string;
  /** Synthetic test identity numbers (month + 80) are accepted. */
  allowSyntheticIds: boolean;
  /** `X-hn-isdebug: true` adds validation paths and the request id to error messages. */
  allowDebug: boolean;
  /** Entries per page of the active-citizens walk. */
  pageSize: number;
  /** Express "trust proxy" (HTTP_TRUST_PROXY): whether X-Forwarded-* describe the client's URL. */
  trustProxy: boolean | number | string;
}

/**
 * Everything the route factories need, built once: `createXRoutes(context)` takes this object.
 * Each area adds the fields it needs here (repositories, publishers, options) in one small commit.
 */
export interface PrivacyContext {
  logger: Logger;
  connection: Connection;
  /** The NATS connection once there is one (start-up does not wait for it); none in some tests. */
  nats: () => NatsConnection | undefined;
  /** The clock of every business time (audit, tidspunkt defaults); tests inject one. */
  clock: () => Date;
  options: PrivacyOptions;
  /** Audit records and replication events of every write (start/stop in main.ts). */
  journal: Journal;
  parts: PartRepository;
  definitions: DefinitionRepository;
  grants: GrantRepository;
  /** Citizens' inclusions (one document per citizen and definition, with history). */
  inclusions: InclusionRepository;
  /** Representation relationships (written by privacy-admin import-representation). */
  representation: RepresentationRepository;
  /** Citizens' settings v2 (proof bytes in their own collection). */
  settings: SettingRepository;
}

export const DEFAULT_PRIVACY_OPTIONS: PrivacyOptions = {
  basePath: '',
  allowSyntheticIds: true,
  allowDebug: true,
  pageSize: 1000,
  trustProxy: false,
};

export interface CreatePrivacyContextInput {
  logger: Logger;
  connection: Connection;
  /** A connection, or how to get it once it exists (main connects in the background). */
  nats?: NatsConnection | (() => NatsConnection | undefined);
  clock?: () => Date;
  options?: Partial<PrivacyOptions>;
  /** How long definitions and grants are trusted from memory (default 5 s; 0: always read). */
  cacheTtlMs?: number;
  /** Journal sweep period (default 5 s). */
  journalSweepIntervalMs?: number;
  /** PRIVACY_EVENTS as configured (NATS_STREAM_REPLICAS); default privacyEventsStreamSpec. */
  eventStream?: StreamSpec;
  /** Told of every event published or failed (the metrics' event counters). */
  events?: PublishObserver;
}

export function createPrivacyContext(input: CreatePrivacyContextInput): PrivacyContext {
  const { logger, connection } = input;
  const clock = input.clock ?? (() => new Date());
  const given = input.nats;
  const nats = typeof given === 'function' ? given : () => given;
  const journal = createJournal({
    connection,
    logger,
    sweepIntervalMs: input.journalSweepIntervalMs,
    now: () => clock().getTime(),
    // Replication events (PRIVACY_EVENTS, provisioned on the first publish) go out through JetStream.
    publish: createSettingEventPublisher({
      nats,
      logger,
      stream: input.eventStream,
      events: input.events,
    }),
  });
  const repositoryOptions = { connection, journal, now: clock, cacheTtlMs: input.cacheTtlMs };
  return {
    logger,
    connection,
    nats,
    clock,
    options: { ...DEFAULT_PRIVACY_OPTIONS, ...input.options },
    journal,
    parts: createPartRepository(repositoryOptions),
    // Changes are announced to the other instances (see followCacheInvalidations in main.ts).
    definitions: createDefinitionRepository({
      ...repositoryOptions,
      onChanged: announceChanges(nats, 'definition', logger),
    }),
    grants: createGrantRepository({
      ...repositoryOptions,
      onChanged: announceChanges(nats, 'grant', logger),
    }),
    inclusions: createInclusionRepository({ connection, journal }),
    representation: createRepresentationRepository({ connection, journal }),
    settings: createSettingRepository({ connection, journal }),
  };
}
