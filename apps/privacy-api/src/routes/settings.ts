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
import { Router } from 'express';
import { asCaller } from '../http/caller';

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
export function createSettingsRoutes(settings: SettingsUseCases): Router {
  const router = Router();

  router.post(
    SETTINGS_PATHS.set,
    requireScope('write', 401),
    validate(
      { body: settInnbyggersPersonvernInnstillingV2RequestSchema },
      async ({ body }, req, res) => {
        res.status(200).json(await asCaller(req, (caller) => settings.set(caller, body)));
      },
    ),
  );

  router.post(
    SETTINGS_PATHS.status,
    requireScope('read', 401),
    validate({ body: sjekkInnbyggersPiStatusV2RequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await asCaller(req, (caller) => settings.checkStatus(caller, body)));
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
        res
          .status(200)
          .json(await asCaller(req, (caller) => settings.activeCitizens(caller, query)));
      },
    ),
  );

  return router;
}
