import { requireCitizen } from '@nhp/privacy-auth';
import type { RepresentationUseCases } from '@nhp/privacy-domain';
import { Router } from 'express';
import { asCaller } from '../http/caller';

export const REPRESENTATION_PATH = '/representasjonsforhold/v1';

/**
 * GET representasjonsforhold/v1: the calling citizen's (token `pid`) relationships, with
 * tilleggsinfo computed at the time of the request. A token without citizen context answers 403
 * EPVK-100403 (the interface lists 403 here).
 */
export function createRepresentationRoutes(representation: RepresentationUseCases): Router {
  const router = Router();
  router.get(REPRESENTATION_PATH, requireCitizen(403), async (req, res) => {
    res.status(200).json(await asCaller(req, (caller) => representation.get(caller)));
  });
  return router;
}
