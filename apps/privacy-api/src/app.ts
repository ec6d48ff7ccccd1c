import { createHttpApp } from '@nhp/shared-http';
import { privacyErrorFormatter } from './http/error-response';
import { healthRouter, type Health } from '@nhp/shared-health';
import type { Logger } from '@nhp/shared-logger';
import type { Express } from 'express';

export interface PrivacyApiDeps {
  logger: Logger;
  health: Health;
}

/**
 * Builds the privacy-api Express app from its dependencies. Tests call it with real
 * infrastructure; main.ts with the configured one. The privacy endpoints of
 * privacy-service.md are mounted in `routes` as they are built.
 */
export function createApp(deps: PrivacyApiDeps): Express {
  return createHttpApp({
    logger: deps.logger,
    errorFormatter: privacyErrorFormatter,
    health: healthRouter(deps.health, { probes: false }),
    routes: () => undefined,
  });
}
