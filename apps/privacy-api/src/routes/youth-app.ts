import { callerOf, requireCitizen } from '@nhp/privacy-auth';
import { emptyObjectSchema } from '@nhp/privacy-contracts';
import { createSettingsService, createYouthAppConsent } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import type { PrivacyContext } from '../context';

/** Both spellings of the operations (version segment first or last) behave alike. */
export const YOUTH_APP_PATHS = ['/v1/ungdomsapp', '/ungdomsapp/v1'];

/**
 * POST and DELETE ungdomsapp: the calling citizen (token `pid`) gives or withdraws the youth-app
 * consent; 200 `{}` either way, also when nothing changes. The request has no body: none, or an
 * empty object, is accepted. A token without citizen context answers 401 EPVK-100403 (the
 * interface lists no 403 here).
 */
export function createYouthAppRoutes(context: PrivacyContext): Router {
  const consent = createYouthAppConsent({
    settings: createSettingsService({
      definitions: context.definitions,
      grants: context.grants,
      representation: context.representation,
      store: context.settings,
      now: context.clock,
      allowSyntheticIds: context.options.allowSyntheticIds,
      pageSize: context.options.pageSize,
    }),
    store: context.settings,
    allowSyntheticIds: context.options.allowSyntheticIds,
  });
  const body = emptyObjectSchema.optional();
  const router = Router();

  for (const [method, action] of [
    ['post', consent.give],
    ['delete', consent.withdraw],
  ] as const) {
    router[method](
      YOUTH_APP_PATHS,
      requireCitizen(401),
      validate({ body }, async (_input, req, res) => {
        const caller = callerOf(req);
        await action({
          pid: caller.pid as string,
          clientId: caller.clientId,
          requestId: typeof req.id === 'string' ? req.id : undefined,
        });
        res.status(200).json({});
      }),
    );
  }
  return router;
}
