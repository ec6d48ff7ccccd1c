import { Router } from 'express';
import request from 'supertest';
import { unauthorized } from '@nhp/shared-errors';
import { createAppMetrics, HttpMetrics } from '@nhp/shared-metrics';
import { Scrape } from '@nhp/shared-testing';
import { buildApp, plainFormatter } from './support';

const REQUESTS = 'test_app_http_requests_total';

/** An app as privacy-api builds it: a token check in front of routers mounted at two paths. */
function guardedApp(serveMetrics?: boolean) {
  const metrics = new HttpMetrics(createAppMetrics('test_app', { defaultMetrics: false }));
  const { app } = buildApp({
    errorFormatter: plainFormatter,
    metrics,
    serveMetrics,
    routes: (router) => {
      router.use((req, _res, next) => {
        if (req.headers.authorization !== 'Bearer ok') throw unauthorized('NO_TOKEN', 'no token');
        next();
      });
      const api = Router();
      api.get('/citizens/:fnr', (_req, res) => {
        res.json({});
      });
      router.use('/base', api);
      router.use(api);
    },
  });
  return { app, metrics };
}

describe('createHttpApp with metrics', () => {
  it('when a request is refused before its route runs, then it is labelled with the route its path matches, as mounted; a path no route matches is unmatched', async () => {
    const { app } = guardedApp();
    await request(app).get('/citizens/01010012345').set('Authorization', 'Bearer ok').expect(200);
    await request(app).get('/citizens/01010012345').expect(401);
    await request(app).get('/base/citizens/02020054321').expect(401);
    await request(app).get('/nowhere/01010012345').expect(401);
    await request(app).get('/nowhere').set('Authorization', 'Bearer ok').expect(404);

    // /metrics needs no token: it is served before the service's routes.
    const metrics = new Scrape((await request(app).get('/metrics').expect(200)).text);
    const at = (route: string, status_class: string) =>
      metrics.value(REQUESTS, { method: 'GET', route, status_class });
    expect(at('/citizens/:fnr', '2xx')).toBe(1);
    expect(at('/citizens/:fnr', '4xx')).toBe(1);
    expect(at('/base/citizens/:fnr', '4xx')).toBe(1);
    expect(at('unmatched', '4xx')).toBe(2);
    expect(metrics.text).not.toMatch(/0101001234|0202005432|nowhere/);
  });

  it('when serveMetrics is false, then /metrics is not served here but requests are still counted', async () => {
    const { app, metrics } = guardedApp(false);
    await request(app).get('/metrics').set('Authorization', 'Bearer ok').expect(404);
    const scrape = new Scrape(await metrics.registry.metrics());
    expect(scrape.value(REQUESTS, { route: 'unmatched', status_class: '4xx' })).toBe(1);
  });
});
