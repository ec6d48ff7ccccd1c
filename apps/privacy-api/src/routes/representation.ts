import { callerOf, requireCitizen } from '@nhp/privacy-auth';
import { getRepresentation } from '@nhp/privacy-domain';
import { Router } from 'express';
import type { PrivacyContext } from '../context';

export const REPRESENTATION_PATH = '/representasjonsforhold/v1';

/**
 * GET representasjonsforhold/v1: the calling citizen's (token `pid`) relationships, with
 * tilleggsinfo computed at the time of the request. A token without citizen context answers 403
 * EPVK-100403 (the interface lists 403 here).
 */
export function createRepresentationRoutes(context: PrivacyContext): Router {
  const router = Router();
  router.get(REPRESENTATION_PATH, requireCitizen(403), async (req, res) => {
    const pid = callerOf(req).pid as string;
    res.status(200).json(await getRepresentation(context.representation, pid, context.clock()));
  });
  return router;
}
