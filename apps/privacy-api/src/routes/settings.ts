import { callerOf, requireScope, type Caller } from '@nhp/privacy-auth';
import {
  hentInnbyggereAktivePiForDefinisjonV2QuerySchema,
  hentInnbyggersOpplastedeBevisV2RequestSchema,
  hentInnbyggersPiV2RequestSchema,
  settInnbyggersPersonvernInnstillingV2RequestSchema,
  sjekkInnbyggersPiStatusV2RequestSchema,
  type PersonvernInnstillingV2,
  type SjekkInnbyggersPiStatusV2Request,
} from '@nhp/privacy-contracts';
import {
  createSettingsService,
  type DefinitionLookup,
  type GrantLookup,
  type RepresentationLookup,
  type SettingsService,
  type SettingsStore,
} from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router, type Response } from 'express';
import { asCaller } from '../http/caller';
import type { PrivacyApiMetrics } from '../metrics';

/** The counters the settings routes keep. */
export type SettingsRouteMetrics = Pick<
  PrivacyApiMetrics,
  'settingWrites' | 'statusChecks' | 'activeCitizensPages'
>;

/** What the settings routes need from the PrivacyContext. */
export interface SettingsRouteDeps {
  definitions: DefinitionLookup;
  grants: GrantLookup;
  /** Whom a citizen's token acts for (the imported representation relationships). */
  representation: RepresentationLookup;
  settings: SettingsStore;
  clock: () => Date;
  options: { allowSyntheticIds: boolean; pageSize: number };
}

const BASE = '/personverninnstillinger';
export const SETTINGS_PATHS = {
  set: `${BASE}/settinnbyggerspersonverninnstilling/v2`,
  status: `${BASE}/sjekkinnbyggerspistatus/v2`,
  forPart: `${BASE}/hentinnbyggerspiforpart/v2`,
  proofs: `${BASE}/hentinnbyggersopplastedebevis/v2`,
  activeCitizens: `${BASE}/hentinnbyggereaktivepifordefinisjon/v2`,
} as const;

/** The settings use cases over the context's stores (one instance serves routes and fast path). */
export function createSettingsServiceFor(deps: SettingsRouteDeps): SettingsService {
  return createSettingsService({
    definitions: deps.definitions,
    grants: deps.grants,
    representation: deps.representation,
    store: deps.settings,
    now: deps.clock,
    allowSyntheticIds: deps.options.allowSyntheticIds,
    pageSize: deps.options.pageSize,
  });
}

/** The status body's contract (the Express route validates with it, so does the fast path). */
export const statusRequestSchema = sjekkInnbyggersPiStatusV2RequestSchema;

/**
 * The status check for a verified caller holding the read scope, with a validated body: what
 * the route answers, and the fast path (src/http/status-fast-path.ts) too, so both apply the
 * same rules to the same caller (a citizen's token included).
 */
export function checkStatus(
  service: SettingsService,
  caller: Caller,
  body: SjekkInnbyggersPiStatusV2Request,
): Promise<PersonvernInnstillingV2> {
  return asCaller(caller, (actor) => service.checkStatus(actor, body));
}

/**
 * Citizens' privacy settings, version 2. Reads need the read scope and the party's read grant,
 * setting needs the write scope and the write grant. The interface lists no 403 for these
 * operations, so a missing scope answers 401 EPVK-100403, as does a citizen's token naming a
 * citizen it does not act for (the use cases decide that). Paths match case-insensitively
 * (Express's default), as real clients call them in PascalCase.
 */
export function createSettingsRoutes(
  deps: SettingsRouteDeps,
  service: SettingsService = createSettingsServiceFor(deps),
  metrics?: SettingsRouteMetrics,
): Router {
  const router = Router();
  /** The outcome of each answered write, for the write counter. */
  const writeOutcomes = new WeakMap<Response, 'endret' | 'ikkeEndret'>();

  router.post(
    SETTINGS_PATHS.set,
    // Counted once answered: endret or ikkeEndret as the answer says, refused for any 4xx here
    // (scope, contract, rules); a 5xx is no verdict on the write and shows in the request metrics.
    (_req, res, next) => {
      if (metrics) {
        res.once('finish', () => {
          const outcome = writeOutcomes.get(res);
          if (outcome) metrics.settingWrites.inc(outcome);
          else if (res.statusCode >= 400 && res.statusCode < 500) {
            metrics.settingWrites.inc('refused');
          }
        });
      }
      next();
    },
    requireScope('write', 401),
    validate(
      { body: settInnbyggersPersonvernInnstillingV2RequestSchema },
      async ({ body }, req, res) => {
        const requestId = typeof req.id === 'string' ? req.id : undefined;
        const response = await asCaller(callerOf(req), (actor) =>
          service.set({ actor, ...(requestId ? { requestId } : {}) }, body),
        );
        writeOutcomes.set(res, response.instansEndret);
        res.status(200).json(response);
      },
    ),
  );

  router.post(
    SETTINGS_PATHS.status,
    requireScope('read', 401),
    validate({ body: statusRequestSchema }, async ({ body }, req, res) => {
      const status = await checkStatus(service, callerOf(req), body);
      metrics?.statusChecks.inc('express');
      res.status(200).json(status);
    }),
  );

  router.post(
    SETTINGS_PATHS.forPart,
    requireScope('read', 401),
    validate({ body: hentInnbyggersPiV2RequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await asCaller(callerOf(req), (actor) => service.forPart(actor, body)));
    }),
  );

  router.post(
    SETTINGS_PATHS.proofs,
    requireScope('read', 401),
    validate({ body: hentInnbyggersOpplastedeBevisV2RequestSchema }, async ({ body }, req, res) => {
      res
        .status(200)
        .json(await asCaller(callerOf(req), (actor) => service.uploadedProofs(actor, body)));
    }),
  );

  router.get(
    SETTINGS_PATHS.activeCitizens,
    requireScope('read', 401),
    validate(
      { query: hentInnbyggereAktivePiForDefinisjonV2QuerySchema },
      async ({ query }, req, res) => {
        const page = await asCaller(callerOf(req), (actor) => service.activeCitizens(actor, query));
        metrics?.activeCitizensPages.inc();
        res.status(200).json(page);
      },
    ),
  );

  return router;
}
