import { partRequestSchema } from '@nhp/privacy-contracts';
import { requireScope } from '@nhp/privacy-auth';
import type { PartUseCases } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import { asCaller } from '../http/caller';

export const PARTS_PATH = '/part/v1';

/** Parties: the admin scope, 403 without it (the interface lists 403 here). */
export function createPartRoutes(parts: PartUseCases): Router {
  const router = Router();

  router.post(
    PARTS_PATH,
    requireScope('admin', 403),
    validate({ body: partRequestSchema }, async ({ body }, req, res) => {
      await asCaller(req, (caller) => parts.create(caller, body));
      res.status(201).json({});
    }),
  );

  router.put(
    PARTS_PATH,
    requireScope('admin', 403),
    validate({ body: partRequestSchema }, async ({ body }, req, res) => {
      await asCaller(req, (caller) => parts.update(caller, body));
      res.status(204).end();
    }),
  );

  return router;
}
