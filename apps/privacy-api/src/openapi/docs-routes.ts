import { Router } from 'express';
import type { PrivacyContext } from '../context';
import { renderDocsPage } from './docs-page';
import { openApiDocument } from './openapi-document';

/** GET /openapi.json and GET /docs: public (schemas only, no data; see the README). */
export function createDocsRoutes(_context: PrivacyContext): Router {
  const router = Router();
  const document = openApiDocument();
  const bytes = Buffer.from(JSON.stringify(document), 'utf8');
  let page: string | undefined;
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(bytes);
  });
  router.get('/docs', (_req, res) => {
    page ??= renderDocsPage(document);
    res.type('html').send(page);
  });
  return router;
}
