import { requireScope } from '@nhp/privacy-auth';
import { settInkluderingRequestSchema } from '@nhp/privacy-contracts';
import type { InclusionUseCases } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import { asCaller } from '../http/caller';

/** Both spellings of the operation (version segment first or last) behave alike. */
export const INCLUSION_PATHS = ['/v1/settinnbyggersinkludering', '/settinnbyggersinkludering/v1'];

/**
 * POST settinnbyggersinkludering: a system with the write scope and the party's write grant sets
 * (or, with aktiv false, ends) a citizen's inclusion. The interface lists no 403 here, so a
 * missing scope answers 401 EPVK-100403, as does a citizen's token naming a citizen it does not
 * act for.
 */
export function createInclusionRoutes(inclusions: InclusionUseCases): Router {
  const router = Router();
  router.post(
    INCLUSION_PATHS,
    requireScope('write', 401),
    validate({ body: settInkluderingRequestSchema }, async ({ body }, req, res) => {
      res.status(200).json(await asCaller(req, (caller) => inclusions.set(caller, body)));
    }),
  );
  return router;
}
