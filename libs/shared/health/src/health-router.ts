import { Router, type Response } from 'express';
import type { Health } from './health';

export interface HealthRouterOptions {
  /**
   * GET /health is always there: 200 with no body when ready, 503 (no body) when not. With `probes`,
   * GET /livez and GET /readyz (JSON with each check) are added for orchestrators.
   */
  probes: boolean;
}

/** Probe answers must reflect now, never a cached copy from a proxy. */
function noStore(res: Response): Response {
  return res.set('Cache-Control', 'no-store');
}

export function healthRouter(health: Health, options: HealthRouterOptions): Router {
  const router = Router();

  router.get('/health', async (_req, res) => {
    const { ready } = await health.readiness();
    noStore(res)
      .status(ready ? 200 : 503)
      .end();
  });

  if (options.probes) {
    router.get('/livez', (_req, res) => {
      health.isLive();
      noStore(res).status(200).json({ status: 'ok' });
    });
    router.get('/readyz', async (_req, res) => {
      const { ready, degraded, checks, shuttingDown } = await health.readiness();
      const status = !ready
        ? shuttingDown
          ? 'shutting-down'
          : 'unavailable'
        : degraded.length > 0
          ? 'degraded'
          : 'ok';
      const body: Record<string, unknown> = { status, checks };
      // Degraded is still ready (200): the failing checks are named so operators see why.
      if (degraded.length > 0) body['degraded'] = degraded;
      noStore(res)
        .status(ready ? 200 : 503)
        .json(body);
    });
  }

  return router;
}
