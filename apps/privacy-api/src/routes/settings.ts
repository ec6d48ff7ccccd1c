import { callerOf, requireScope } from '@nhp/privacy-auth';
import {
  hentInnbyggereAktivePiForDefinisjonV2QuerySchema,
  hentInnbyggersOpplastedeBevisV2RequestSchema,
  hentInnbyggersPiV2RequestSchema,
  settInnbyggersPersonvernInnstillingV2RequestSchema,
  sjekkInnbyggersPiStatusV2RequestSchema,
} from '@nhp/privacy-contracts';
import {
  createSettingsService,
  type Actor,
  type DefinitionLookup,
  type GrantLookup,
  type SettingsStore,
} from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router, type Request } from 'express';

/** What the settings routes need from the PrivacyContext. */
export interface SettingsRouteDeps {
  definitions: DefinitionLookup;
  grants: GrantLookup;
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

function actorOf(req: Request): Actor {
  const caller = callerOf(req);
  return { clientId: caller.clientId, isAdmin: caller.isAdmin };
}

/**
 * Citizens' privacy settings, version 2. Reads need the read scope and the party's read grant,
 * setting needs the write scope and the write grant. The interface lists no 403 for these
 * operations, so a missing scope answers 401 EPVK-100403. Paths match case-insensitively
 * (Express's default), as real clients call them in PascalCase.
 */
export function createSettingsRoutes(deps: SettingsRouteDeps): Router {
  const service = createSettingsService({
    definitions: deps.definitions,
    grants: deps.grants,
    store: deps.settings,
    now: deps.clock,
    allowSyntheticIds: deps.options.allowSyntheticIds,
    pageSize: deps.options.pageSize,
  });
  const router = Router();

  router.post(
    SETTINGS_PATHS.set,
    requireScope('write', 401),
    validate(
      { body: settInnbyggersPersonvernInnstillingV2RequestSchema },
      async ({ body }, req, res) => {
        const requestId = typeof req.id === 'string' ? req.id : undefined;
        const response = await service.set(
          { actor: actorOf(req), ...(requestId ? { requestId } : {}) },
          body,
        );
        res.status(200).json(response);
      },
    ),
  );

  router.post(
    SETTINGS_PATHS.status,
    requireScope('read', 401),
    validate({ body: sjekkInnbyggersPiStatusV2RequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await service.checkStatus(actorOf(req), body));
    }),
  );

  router.post(
    SETTINGS_PATHS.forPart,
    requireScope('read', 401),
    validate({ body: hentInnbyggersPiV2RequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await service.forPart(actorOf(req), body));
    }),
  );

  router.post(
    SETTINGS_PATHS.proofs,
    requireScope('read', 401),
    validate({ body: hentInnbyggersOpplastedeBevisV2RequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await service.uploadedProofs(actorOf(req), body));
    }),
  );

  router.get(
    SETTINGS_PATHS.activeCitizens,
    requireScope('read', 401),
    validate(
      { query: hentInnbyggereAktivePiForDefinisjonV2QuerySchema },
      async ({ query }, req, res) => {
        res.status(200).json(await service.activeCitizens(actorOf(req), query));
      },
    ),
  );

  return router;
}
