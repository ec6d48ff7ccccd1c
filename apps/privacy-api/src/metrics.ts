import {
  AUTH_DEPENDENCIES,
  AUTH_REFUSAL_REASONS,
  authRefusalReason,
  authUnavailableDependency,
  type AuthRefusalReason,
} from '@nhp/privacy-auth';
import { PRIVACY_CODES, SETTING_CHANGED_EVENT_TYPE } from '@nhp/privacy-contracts';
import { isGrantRefusal } from '@nhp/privacy-domain';
import type { AppError } from '@nhp/shared-errors';
import {
  boundedCounter,
  connectionGauges,
  createAppMetrics,
  eventCounters,
  HttpMetrics,
  outboxGauges,
  plainCounter,
  readinessGauge,
  type OutboxBacklog,
} from '@nhp/shared-metrics';

export const SETTING_WRITE_OUTCOMES = ['endret', 'ikkeEndret', 'refused'] as const;
export type SettingWriteOutcome = (typeof SETTING_WRITE_OUTCOMES)[number];
/** Who answered a status check: the fast path in front of Express, or the Express route. */
export const STATUS_CHECK_PATHS = ['fast', 'express'] as const;

/** What the gauges read when scraped. */
export interface PrivacyMetricsSources {
  mongodb(): boolean;
  nats(): boolean;
  /** The journal's backlog (PrivacyContext.journal.backlog). */
  backlog(): Promise<OutboxBacklog>;
  /** Whether the app is ready now (health.readiness()), for `privacy_api_ready`. */
  ready?(): Promise<boolean>;
}

/**
 * Why an error answer refused the caller, or undefined when it did not: privacy-auth names its own
 * refusals; a use case's refusal for want of a grant is named by the domain; any other
 * EPVK-100403 (a citizen's token naming a citizen it does not act for) is refused as a missing
 * scope is, and counted so.
 */
export function refusalReasonOf(err: AppError): AuthRefusalReason | undefined {
  const reason = authRefusalReason(err);
  if (reason) return reason;
  if (isGrantRefusal(err)) return 'grant';
  return err.code === PRIVACY_CODES.refused ? 'scope' : undefined;
}

/**
 * privacy-api's metrics (README, "Metrics"): the shared request, connection, journal and event
 * metrics under `privacy_api_`, and its own counters. One per process; `watch` adds the gauges
 * once the connections and the journal exist.
 */
export function createPrivacyApiMetrics(options: { defaultMetrics?: boolean } = {}) {
  const app = createAppMetrics('privacy_api', options);
  let watching = false;
  return {
    registry: app.registry,
    http: new HttpMetrics(app),
    events: eventCounters(app, [SETTING_CHANGED_EVENT_TYPE]),
    authRefusals: boundedCounter(app, {
      suffix: 'auth_refusals_total',
      help: 'Requests refused for their credentials or rights, by reason (expired, signature, audience, issuer, malformed, dpop_proof, replay, scope, grant, missing).',
      label: 'reason',
      values: AUTH_REFUSAL_REASONS,
    }),
    authUnavailable: boundedCounter(app, {
      suffix: 'auth_unavailable_total',
      help: "Requests answered 500 EPVK-100503 because authentication could not be done now, by dependency: jwks (the identity provider's keys could not be fetched) or dpop_replay_store (the DPoP replay store unreachable or full).",
      label: 'dependency',
      values: AUTH_DEPENDENCIES,
    }),
    settingWrites: boundedCounter(app, {
      suffix: 'setting_writes_total',
      help: 'Settings writes (settinnbyggerspersonverninnstilling) by outcome: endret, ikkeEndret (an exact repeat), refused (a 4xx after authentication).',
      label: 'outcome',
      values: SETTING_WRITE_OUTCOMES,
    }),
    activeCitizensPages: plainCounter(app, {
      suffix: 'active_citizens_pages_total',
      help: 'Pages of hentinnbyggereaktivepifordefinisjon served (200).',
    }),
    statusChecks: boundedCounter(app, {
      suffix: 'status_checks_total',
      help: 'Status checks (sjekkinnbyggerspistatus) answered 200, by path: fast (the fast path) or express.',
      label: 'path',
      values: STATUS_CHECK_PATHS,
    }),
    /**
     * Counts an error answer that refused the caller, or that authentication could not be done
     * for a dependency's outage (called by the error formatter).
     */
    countRefusal(err: AppError): void {
      const reason = refusalReasonOf(err);
      if (reason) this.authRefusals.inc(reason);
      const dependency = authUnavailableDependency(err);
      if (dependency) this.authUnavailable.inc(dependency);
    },
    /** The connection and journal gauges, read when scraped; only the first call counts. */
    watch(sources: PrivacyMetricsSources): void {
      if (watching) return;
      watching = true;
      connectionGauges(app, { mongodb: sources.mongodb, nats: sources.nats });
      outboxGauges(app, { read: sources.backlog });
      if (sources.ready) readinessGauge(app, sources.ready);
    },
  };
}

export type PrivacyApiMetrics = ReturnType<typeof createPrivacyApiMetrics>;
