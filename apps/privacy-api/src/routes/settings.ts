import { requireScope } from '@nhp/privacy-auth';
import {
  hentInnbyggereAktivePiForDefinisjonV2QuerySchema,
  hentInnbyggersOpplastedeBevisV2RequestSchema,
  hentInnbyggersPiV2RequestSchema,
  settInnbyggersPersonvernInnstillingV2RequestSchema,
  sjekkInnbyggersPiStatusV2RequestSchema,
} from '@nhp/privacy-contracts';
import type { SettingsUseCases } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router, type Response } from 'express';
import { asCaller } from '../http/caller';
import { takeUseCaseFailure } from '../http/handed-over';
import type { PrivacyApiMetrics } from '../metrics';

/** The counters the settings routes keep. */
export type SettingsRouteMetrics = Pick<
  PrivacyApiMetrics,
  'settingWrites' | 'statusChecks' | 'activeCitizensPages'
>;

const BASE = '/personverninnstillinger';
export const SETTINGS_PATHS = {
  set: `${BASE}/settinnbyggerspersonverninnstilling/v2`,
  status: `${BASE}/sjekkinnbyggerspistatus/v2`,
  forPart: `${BASE}/hentinnbyggerspiforpart/v2`,
  proofs: `${BASE}/hentinnbyggersopplastedebevis/v2`,
  activeCitizens: `${BASE}/hentinnbyggereaktivepifordefinisjon/v2`,
} as const;

/**
 * Citizens' privacy settings, version 2. Reads need the read scope and the party's read grant,
 * setting needs the write scope and the write grant. The interface lists no 403 for these
 * operations, so a missing scope answers 401 EPVK-100403, as does a citizen's token naming a
 * citizen it does not act for (the use cases decide that). Paths match case-insensitively
 * (Express's default), as real clients call them in PascalCase. The status check is mostly
 * answered by the fast path in front of Express (src/http/status-fast-path.ts), with the same
 * use case.
 */
export function createSettingsRoutes(
  settings: SettingsUseCases,
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
        const response = await asCaller(req, (caller) => settings.set(caller, body));
        writeOutcomes.set(res, response.instansEndret);
        res.status(200).json(response);
      },
    ),
  );

  router.post(
    SETTINGS_PATHS.status,
    requireScope('read', 401),
    validate({ body: sjekkInnbyggersPiStatusV2RequestSchema }, async ({ body }, req, res) => {
      // A request the fast path handed over after its use case failed: that error, not a rerun.
      const failed = takeUseCaseFailure(req);
      const status = await asCaller(req, (caller) =>
        failed ? Promise.reject(failed.error) : settings.checkStatus(caller, body),
      );
      metrics?.statusChecks.inc('express');
      res.status(200).json(status);
    }),
  );

  router.post(
    SETTINGS_PATHS.forPart,
    requireScope('read', 401),
    validate({ body: hentInnbyggersPiV2RequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await asCaller(req, (caller) => settings.forPart(caller, body)));
    }),
  );

  router.post(
    SETTINGS_PATHS.proofs,
    requireScope('read', 401),
    validate({ body: hentInnbyggersOpplastedeBevisV2RequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await asCaller(req, (caller) => settings.uploadedProofs(caller, body)));
    }),
  );

  router.get(
    SETTINGS_PATHS.activeCitizens,
    requireScope('read', 401),
    validate(
      { query: hentInnbyggereAktivePiForDefinisjonV2QuerySchema },
      async ({ query }, req, res) => {
        const page = await asCaller(req, (caller) => settings.activeCitizens(caller, query));
        metrics?.activeCitizensPages.inc();
        res.status(200).json(page);
      },
    ),
  );

  return router;
}
