import {
  createDefinitionRequestSchema,
  hentInnstillingDefinisjonerQuerySchema,
  updateDefinitionRequestSchema,
} from '@nhp/privacy-contracts';
import { callerOf, requireScope } from '@nhp/privacy-auth';
import { createDefinitionListing } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import type { PrivacyContext } from '../context';
import { createDefinition, updateDefinition } from '../definitions/definition-use-cases';
import { asCaller, auditOf } from '../http/caller';

export const DEFINITIONS_PATH = '/innstillingdefinisjon/v1';

/**
 * Definitions: creating and changing them needs the admin scope, listing a party's the read scope
 * (an addition for callers, see the README). The interface lists no 403 for these operations, so
 * a token without the scope is answered 401 EPVK-100403.
 */
export function createDefinitionRoutes(context: PrivacyContext): Router {
  const router = Router();
  const listDefinitions = createDefinitionListing(context);

  router.get(
    DEFINITIONS_PATH,
    requireScope('read', 401),
    validate({ query: hentInnstillingDefinisjonerQuerySchema }, async ({ query }, req, res) => {
      res.status(200).json(await asCaller(callerOf(req), (actor) => listDefinitions(actor, query)));
    }),
  );

  router.post(
    DEFINITIONS_PATH,
    requireScope('admin', 401),
    validate({ body: createDefinitionRequestSchema }, async ({ body }, req, res) => {
      await createDefinition(context, body, auditOf(req));
      res.status(201).json({});
    }),
  );

  router.patch(
    DEFINITIONS_PATH,
    requireScope('admin', 401),
    validate({ body: updateDefinitionRequestSchema }, async ({ body }, req, res) => {
      await updateDefinition(context, body, auditOf(req));
      res.status(204).end();
    }),
  );

  return router;
}
