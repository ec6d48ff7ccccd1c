import {
  createDefinitionRequestSchema,
  updateDefinitionRequestSchema,
} from '@nhp/privacy-contracts';
import { requireScope } from '@nhp/privacy-auth';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import type { PrivacyContext } from '../context';
import { createDefinition, updateDefinition } from '../definitions/definition-use-cases';
import { auditOf } from '../http/caller';

export const DEFINITIONS_PATH = '/innstillingdefinisjon/v1';

/**
 * Definitions: the admin scope. The interface lists no 403 for these operations, so a token
 * without the scope is answered 401 EPVK-100403.
 */
export function createDefinitionRoutes(context: PrivacyContext): Router {
  const router = Router();

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
