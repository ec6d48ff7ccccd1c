import { Router } from 'express';
import type { PrivacyContext } from '../context';

/** Placeholder so the app shell compiles; the representation area replaces it with its routes. */
export function createRepresentationRoutes(_context: PrivacyContext): Router {
  return Router();
}
