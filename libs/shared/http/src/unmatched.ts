import type { Express, RequestHandler } from 'express';
import { methodNotAllowed, notFound } from '@nhp/shared-errors';
import { allowedMethods } from './allowed-methods';

/** 404, or 405 with Allow when the path exists for other methods. OPTIONS answers 204 with Allow. */
export function unmatched(app: Express): RequestHandler {
  return (req, res) => {
    const path = req.path;
    const allowed = allowedMethods(app.router, path);
    if (allowed.length === 0 || allowed.includes(req.method)) {
      throw notFound('NOT_FOUND', `No resource at ${req.method} ${path}`);
    }
    const allow = allowed.join(', ');
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', allow);
      res.status(204).end();
      return;
    }
    throw methodNotAllowed(
      'METHOD_NOT_ALLOWED',
      `${req.method} is not allowed on ${path}; use ${allow}`,
      undefined,
      {
        headers: { Allow: allow },
      },
    );
  };
}
