import {
  createDefinitionRequestSchema,
  hentInnstillingDefinisjonerQuerySchema,
  updateDefinitionRequestSchema,
} from '@nhp/privacy-contracts';
import { requireScope } from '@nhp/privacy-auth';
import type { DefinitionUseCases } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import { asCaller } from '../http/caller';

export const DEFINITIONS_PATH = '/innstillingdefinisjon/v1';

/**
 * Definitions: creating and changing them needs the admin scope, listing a party's the read scope
 * (an addition for callers, see the README). The interface lists no 403 for these operations, so
 * a token without the scope is answered 401 EPVK-100403.
 */
export function createDefinitionRoutes(definitions: DefinitionUseCases): Router {
  const router = Router();

  router.get(
    DEFINITIONS_PATH,
    requireScope('read', 401),
    validate({ query: hentInnstillingDefinisjonerQuerySchema }, async ({ query }, req, res) => {
      res.status(200).json(await asCaller(req, (caller) => definitions.list(caller, query)));
    }),
  );

  router.post(
    DEFINITIONS_PATH,
    requireScope('admin', 401),
    validate({ body: createDefinitionRequestSchema }, async ({ body }, req, res) => {
      await asCaller(req, (caller) => definitions.create(caller, body));
      res.status(201).json({});
    }),
  );

  router.patch(
    DEFINITIONS_PATH,
    requireScope('admin', 401),
    validate({ body: updateDefinitionRequestSchema }, async ({ body }, req, res) => {
      await asCaller(req, (caller) => definitions.update(caller, body));
      res.status(204).end();
    }),
  );

  return router;
}
