import { partRequestSchema, type PartRequest } from '@nhp/privacy-contracts';
import { requireScope } from '@nhp/privacy-auth';
import type { Part } from '@nhp/privacy-data-access';
import { privacyErrors } from '@nhp/privacy-domain';
import { validate } from '@nhp/shared-http';
import { Router } from 'express';
import type { PrivacyContext } from '../context';
import { auditOf } from '../http/caller';

export const PARTS_PATH = '/part/v1';

function partOf(body: PartRequest): Part {
  if (body.partKode == null) {
    throw privacyErrors.validation('Invalid request: body.partKode: required', [
      { location: 'body', path: 'partKode', message: 'required' },
    ]);
  }
  return {
    partKode: body.partKode,
    navn: body.navn ?? null,
    kortNavn: body.kortNavn ?? null,
    beskrivelse: body.beskrivelse ?? null,
    uri: body.uri ?? null,
  };
}

/** Parties: the admin scope, 403 without it (the interface lists 403 here). */
export function createPartRoutes(context: PrivacyContext): Router {
  const router = Router();

  router.post(
    PARTS_PATH,
    requireScope('admin', 403),
    validate({ body: partRequestSchema }, async ({ body }, req, res) => {
      await context.parts.create(partOf(body), auditOf(req));
      res.status(201).json({});
    }),
  );

  router.put(
    PARTS_PATH,
    requireScope('admin', 403),
    validate({ body: partRequestSchema }, async ({ body }, req, res) => {
      await context.parts.update(partOf(body), auditOf(req));
      res.status(204).end();
    }),
  );

  return router;
}
