import { Router } from 'express';
import type { PrivacyContext } from '../context';

/** Placeholder so the app shell compiles; the youth-app area replaces it with its routes. */
export function createYouthAppRoutes(_context: PrivacyContext): Router {
  return Router();
}
