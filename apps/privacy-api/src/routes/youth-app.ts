import { requireCitizen } from '@nhp/privacy-auth';
import { emptyObjectSchema } from '@nhp/privacy-contracts';
import type { YouthAppUseCases } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import { asCaller } from '../http/caller';

/** Both spellings of the operations (version segment first or last) behave alike. */
export const YOUTH_APP_PATHS = ['/v1/ungdomsapp', '/ungdomsapp/v1'];

/**
 * POST and DELETE ungdomsapp: the calling citizen (token `pid`) gives or withdraws the youth-app
 * consent; 200 `{}` either way, also when nothing changes. The request has no body: none, or an
 * empty object, is accepted. A token without citizen context answers 401 EPVK-100403 (the
 * interface lists no 403 here).
 */
export function createYouthAppRoutes(youthApp: YouthAppUseCases): Router {
  const body = emptyObjectSchema.optional();
  const router = Router();

  for (const [method, action] of [
    ['post', youthApp.give],
    ['delete', youthApp.withdraw],
  ] as const) {
    router[method](
      YOUTH_APP_PATHS,
      requireCitizen(401),
      validate({ body }, async (_input, req, res) => {
        await asCaller(req, action);
        res.status(200).json({});
      }),
    );
  }
  return router;
}
