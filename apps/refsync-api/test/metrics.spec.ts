import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsListener } from '@nhp/shared-metrics';
import { Scrape } from '@nhp/shared-testing';
import request from 'supertest';
import { createRefsyncApiHealth } from '../src/readiness';
import { put, startHarness, tg, TEST_KEY, type Harness } from './support/harness';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
  await harness.commit({ treatmentGroup: [put(tg('TG-1', 'Insulin'))] });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

const REQUESTS = 'refsync_api_http_requests_total';
const DURATION = 'refsync_api_http_request_duration_seconds';

async function scrape(app: ReturnType<Harness['app']>): Promise<Scrape> {
  const res = await request(app).get('/metrics').expect(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  return new Scrape(res.text);
}

describe('GET /metrics', () => {
  it('when requests were answered by either path, then they are counted once each by route template and status class, with durations, cache hits, misses and bytes', async () => {
    const app = harness.app();
    await app.warmUp();
    const path = '/api/v1/treatmentGroup';
    const first = await request(app).get(path).set('X-API-KEY', TEST_KEY).expect(200); // miss
    await request(app).get(path).set('X-API-KEY', TEST_KEY).expect(200); // fast path, cached
    await request(app)
      .get(path)
      .set('X-API-KEY', TEST_KEY)
      .set('If-None-Match', first.headers['etag'] as string)
      .expect(304); // fast path
    await request(app).get(path).set('X-API-KEY', 'wrong').expect(401);
    await request(app).get('/nowhere/01010012345').expect(404);

    const metrics = await scrape(app);
    const at = (status_class: string, route = path) =>
      metrics.value(REQUESTS, { method: 'GET', route, status_class });
    expect(at('2xx')).toBe(2);
    expect(at('3xx')).toBe(1);
    expect(at('4xx')).toBe(1);
    // The fast path's answers and Express's land in the same histogram series.
    expect(
      metrics.histogram(DURATION, { method: 'GET', route: path, status_class: '2xx' })?.count,
    ).toBe(2);
    expect(metrics.histogram(DURATION, { route: path, status_class: '3xx' })?.buckets['+Inf']).toBe(
      1,
    );
    // Unknown paths share one label, so clients cannot grow the series without bound.
    expect(at('4xx', 'unmatched')).toBe(1);
    expect(metrics.text).not.toContain('/nowhere');
    expect(metrics.text).not.toContain('01010012345');
    expect(metrics.family('refsync_api_requests_total')).toBeUndefined();
    expect(metrics.value('refsync_api_cache_hits_total')).toBe(1);
    expect(metrics.value('refsync_api_cache_misses_total')).toBe(1);
    expect(metrics.value('refsync_api_cache_bytes')).toBeGreaterThan(first.text.length);
    // supertest asks for gzip: the gzip body and the identity body it was compressed from.
    expect(metrics.value('refsync_api_cache_entries')).toBe(2);
    expect(metrics.value('refsync_api_data_version')).toBe(1);
    expect(metrics.value('refsync_api_data_version_lag')).toBe(0);
    expect(metrics.value('refsync_api_mongodb_connected')).toBe(1);
    expect(metrics.value('refsync_api_nats_connected')).toBe(1);

    // A second scrape counts only what happened since: counters never double.
    await request(app).get(path).set('X-API-KEY', TEST_KEY).expect(200);
    const again = await scrape(app);
    expect(again.value(REQUESTS, { route: path, status_class: '2xx' })).toBe(3);
    expect(again.value('refsync_api_cache_hits_total')).toBe(2);
    expect(again.value(REQUESTS, { route: '/metrics', status_class: '2xx' })).toBe(1);
  });

  it('when storage has a version the service has not read yet, then the version lag says how many', async () => {
    const app = harness.app();
    await app.warmUp();
    const served = app.versions.current() as number;
    await harness.commit({ treatmentGroup: [put(tg('TG-2', 'Metformin'))] }); // no event
    const metrics = await scrape(app);
    expect(metrics.value('refsync_api_data_version')).toBe(served);
    expect(metrics.value('refsync_api_data_version_lag')).toBe(1);
  });

  it('when the service is ready, then refsync_api_ready is 1; when it is shutting down, then 0', async () => {
    const health = createRefsyncApiHealth({
      logger: harness.logs.logger,
      connection: harness.connection,
      nats: () => harness.nats,
    });
    const app = harness.app({ ready: async () => (await health.readiness()).ready });
    expect((await scrape(app)).value('refsync_api_ready')).toBe(1);
    health.markShuttingDown();
    expect((await scrape(app)).value('refsync_api_ready')).toBe(0);
  });

  it('when /metrics moves to a port of its own, then the API port answers 404 for it and the metrics listener serves it', async () => {
    const app = harness.app({ serveMetrics: false });
    await request(app).get('/metrics').expect(404);
    const server: Server = createServer(metricsListener(app.metrics.registry));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(new Scrape(body).value(REQUESTS, { route: 'unmatched', status_class: '4xx' })).toBe(1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
