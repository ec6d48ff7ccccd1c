import { privacyAsyncApiDocument } from '@nhp/privacy-data-access';
import { renderApiDocsPage } from '@nhp/shared-http';
import { Router } from 'express';
import type { PrivacyContext } from '../context';
import { openApiDocument } from './openapi-document';

const PRIVACY_CREDENTIAL = {
  curl: "-H 'Authorization: Bearer <token>'",
  badge: 'token',
  publicBadge: 'no token',
};

/**
 * GET /openapi.json, GET /asyncapi.json (the events' contract) and GET /docs: public (schemas
 * only, no data; see the README).
 */
export function createDocsRoutes(_context: PrivacyContext): Router {
  const router = Router();
  const document = openApiDocument();
  const bytes = Buffer.from(JSON.stringify(document), 'utf8');
  const pages = new Map<string, string>();
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(bytes);
  });
  const asyncApiBytes = Buffer.from(JSON.stringify(privacyAsyncApiDocument()), 'utf8');
  router.get('/asyncapi.json', (_req, res) => {
    res.type('application/json').send(asyncApiBytes);
  });
  router.get('/docs', (req, res) => {
    // One page per origin the clients use (the curl examples name it); a handful at most.
    const origin = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    let page = pages.get(origin);
    if (page === undefined) {
      page = renderApiDocsPage(document, { origin, credential: PRIVACY_CREDENTIAL });
      if (pages.size < 16) pages.set(origin, page);
    }
    res.type('html').send(page);
  });
  return router;
}
