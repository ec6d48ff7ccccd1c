import { Router } from 'express';
import type { PrivacyContext } from '../context';

/** Placeholder so the app shell compiles; the inclusions area replaces it with its routes. */
export function createInclusionRoutes(_context: PrivacyContext): Router {
  return Router();
}
