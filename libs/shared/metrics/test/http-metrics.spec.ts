import express, { Router } from 'express';
import request from 'supertest';
import { Scrape } from '@nhp/shared-testing';
import { createAppMetrics, HttpMetrics, metricsHandler } from '../src';

const REQUESTS = 'test_app_http_requests_total';
const DURATION = 'test_app_http_request_duration_seconds';

/** An Express app with a mounted router, as the apps build theirs. */
function appWith(http: HttpMetrics) {
  const app = express();
  http.instrument(app);
  app.use(http.middleware);
  const api = Router();
  api.get('/citizens/:fnr', (_req, res) => {
    res.json({ ok: true });
  });
  api.get('/broken', () => {
    throw Object.assign(new Error('bad input'), { status: 400 });
  });
  app.use('/base', api);
  app.use(api);
  app.get('/metrics', metricsHandler(http.registry));
  app.use((_req, res) => {
    res.status(404).end();
  });
  app.use(
    (err: { status?: number }, _req: express.Request, res: express.Response, _next: unknown) => {
      res.status(err.status ?? 500).end();
    },
  );
  return app;
}

async function scrape(app: express.Express): Promise<Scrape> {
  return new Scrape((await request(app).get('/metrics').expect(200)).text);
}

describe('HttpMetrics', () => {
  it('when requests are answered, then they are counted by route template as mounted, method and status class, never by their URL', async () => {
    const http = new HttpMetrics(createAppMetrics('test_app', { defaultMetrics: false }));
    const app = appWith(http);
    await request(app).get('/citizens/01010012345').expect(200);
    await request(app).get('/citizens/02020054321').expect(200);
    await request(app).get('/base/citizens/01010012345').expect(200);
    await request(app).get('/base/broken').expect(400);
    await request(app).get('/broken').expect(400);
    await request(app).get('/nowhere/01010012345').expect(404);
    await request(app).post('/citizens/01010012345').expect(404);

    const metrics = await scrape(app);
    const at = (route: string, method: string, status_class: string) =>
      metrics.value(REQUESTS, { route, method, status_class });
    expect(at('/citizens/:fnr', 'GET', '2xx')).toBe(2);
    expect(at('/base/citizens/:fnr', 'GET', '2xx')).toBe(1);
    // An error thrown under a mounted router keeps the mount in its label.
    expect(at('/base/broken', 'GET', '4xx')).toBe(1);
    expect(at('/broken', 'GET', '4xx')).toBe(1);
    expect(at('unmatched', 'GET', '4xx')).toBe(1);
    expect(at('unmatched', 'POST', '4xx')).toBe(1);
    expect(metrics.text).not.toContain('01010012345');
    expect(metrics.text).not.toContain('nowhere');

    const duration = metrics.histogram(DURATION, {
      route: '/citizens/:fnr',
      method: 'GET',
      status_class: '2xx',
    });
    expect(duration?.count).toBe(2);
    expect(duration?.buckets['+Inf']).toBe(2);
    expect(duration?.buckets['10']).toBe(2);
    expect(duration?.sum).toBeGreaterThan(0);
    expect(metrics.family(DURATION)?.type).toBe('HISTOGRAM');
    expect(metrics.family(REQUESTS)?.type).toBe('COUNTER');
  });

  it('when a fast path records an answer, then it lands in the same series as Express answers of that route', async () => {
    const http = new HttpMetrics(createAppMetrics('test_app', { defaultMetrics: false }));
    const app = appWith(http);
    await request(app).get('/citizens/01010012345').expect(200);
    const route = http.route('/citizens/:fnr');
    route.record('GET', 200, 0.0002);
    route.record('GET', 304, 0.0001);
    route.record('BREW', 200, 0.0001);

    const metrics = await scrape(app);
    expect(
      metrics.value(REQUESTS, { route: '/citizens/:fnr', status_class: '2xx', method: 'GET' }),
    ).toBe(2);
    expect(metrics.value(REQUESTS, { route: '/citizens/:fnr', status_class: '3xx' })).toBe(1);
    expect(metrics.value(REQUESTS, { route: '/citizens/:fnr', method: 'other' })).toBe(1);
    const fast = metrics.histogram(DURATION, { route: '/citizens/:fnr', status_class: '3xx' });
    expect(fast).toEqual(expect.objectContaining({ count: 1 }));
    expect(fast?.buckets['0.0005']).toBe(1);
  });

  it('when scraped twice, then counters only grow by what happened in between', async () => {
    const http = new HttpMetrics(createAppMetrics('test_app', { defaultMetrics: false }));
    const app = appWith(http);
    await request(app).get('/citizens/1').expect(200);
    const first = await scrape(app);
    await request(app).get('/citizens/2').expect(200);
    const second = await scrape(app);
    const labels = { route: '/citizens/:fnr', status_class: '2xx' };
    expect(first.value(REQUESTS, labels)).toBe(1);
    expect(second.value(REQUESTS, labels)).toBe(2);
    // The first scrape itself was counted by the second.
    expect(second.value(REQUESTS, { route: '/metrics' })).toBe(1);
  });
});

describe('createAppMetrics', () => {
  it('when created, then the process metrics keep their standard, unprefixed names', async () => {
    const metrics = createAppMetrics('test_app');
    const scrape = new Scrape(await metrics.registry.metrics());
    expect(scrape.family('process_cpu_seconds_total')?.type).toBe('COUNTER');
    expect(scrape.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(metrics.name('http_requests_total')).toBe('test_app_http_requests_total');
  });

  it('when the prefix is not snake case, then it is refused', () => {
    expect(() => createAppMetrics('privacy-api')).toThrow(/snake_case/);
  });
});
