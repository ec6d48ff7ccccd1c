import { Router, type Response } from 'express';
import type { Health } from './health';

export interface HealthRouterOptions {
  /**
   * privacy: only GET /health, as privacy-service.md defines it (200 with no body when healthy, 503
   * when not). probes: the same /health plus GET /livez and GET /readyz for orchestrators.
   */
  style: 'privacy' | 'probes';
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

  if (options.style === 'probes') {
    router.get('/livez', (_req, res) => {
      health.isLive();
      noStore(res).status(200).json({ status: 'ok' });
    });
    router.get('/readyz', async (_req, res) => {
      const { ready, checks, shuttingDown } = await health.readiness();
      noStore(res)
        .status(ready ? 200 : 503)
        .json({ status: ready ? 'ok' : shuttingDown ? 'shutting-down' : 'unavailable', checks });
    });
  }

  return router;
}
