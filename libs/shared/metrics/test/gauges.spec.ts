import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Scrape } from '@nhp/shared-testing';
import {
  connectionGauges,
  createAppMetrics,
  eventCounters,
  metricsListener,
  outboxGauges,
  readinessGauge,
  type OutboxBacklog,
} from '../src';

const metricsOf = () => createAppMetrics('test_app', { defaultMetrics: false });
const scrape = async (metrics: ReturnType<typeof metricsOf>) =>
  new Scrape(await metrics.registry.metrics());

describe('connectionGauges', () => {
  it('when scraped, then each gauge is 1 while its check says connected and 0 otherwise, a throwing check counting as 0', async () => {
    const metrics = metricsOf();
    let mongo = true;
    connectionGauges(metrics, {
      mongodb: () => mongo,
      nats: () => {
        throw new Error('no connection object');
      },
    });
    expect((await scrape(metrics)).value('test_app_mongodb_connected')).toBe(1);
    expect((await scrape(metrics)).value('test_app_nats_connected')).toBe(0);
    mongo = false;
    expect((await scrape(metrics)).value('test_app_mongodb_connected')).toBe(0);
  });
});

describe('readinessGauge', () => {
  it('when scraped, then it is 1 while the readiness says ready and 0 when it says not ready or fails', async () => {
    const metrics = metricsOf();
    let ready: () => Promise<boolean> = async () => true;
    readinessGauge(metrics, () => ready());
    expect((await scrape(metrics)).value('test_app_ready')).toBe(1);
    ready = async () => false;
    expect((await scrape(metrics)).value('test_app_ready')).toBe(0);
    ready = () => Promise.reject(new Error('cannot evaluate'));
    expect((await scrape(metrics)).value('test_app_ready')).toBe(0);
  });
});

describe('outboxGauges', () => {
  it('when the backlog is read, then pending and the age of the oldest entry are shown; when the read fails or hangs, then the last values stay and the scrape answers', async () => {
    const metrics = metricsOf();
    const now = Date.parse('2026-01-01T00:10:00Z');
    let read: () => Promise<OutboxBacklog> = async () => ({
      pending: 3,
      oldestCreatedAt: new Date(now - 90_000),
    });
    let reads = 0;
    outboxGauges(metrics, {
      read: () => {
        reads++;
        return read();
      },
      timeoutMs: 50,
      now: () => now,
    });
    let s = await scrape(metrics);
    expect(s.value('test_app_outbox_pending_events')).toBe(3);
    expect(s.value('test_app_outbox_oldest_pending_age_seconds')).toBe(90);
    // One read serves both gauges.
    expect(reads).toBe(1);

    read = () => Promise.reject(new Error('MongoDB is down'));
    s = await scrape(metrics);
    expect(s.value('test_app_outbox_pending_events')).toBe(3);
    read = () => new Promise(() => undefined);
    s = await scrape(metrics);
    expect(s.value('test_app_outbox_oldest_pending_age_seconds')).toBe(90);

    read = async () => ({ pending: 0, oldestCreatedAt: undefined });
    s = await scrape(metrics);
    expect(s.value('test_app_outbox_pending_events')).toBe(0);
    expect(s.value('test_app_outbox_oldest_pending_age_seconds')).toBe(0);
  });
});

describe('eventCounters', () => {
  it('when events are published or fail, then they are counted by type, known types from 0', async () => {
    const metrics = metricsOf();
    const events = eventCounters(metrics, ['a.changed', 'b.changed']);
    events.published('a.changed');
    events.published('a.changed');
    events.failed('a.changed');
    const s = await scrape(metrics);
    expect(s.value('test_app_events_published_total', { type: 'a.changed' })).toBe(2);
    expect(s.value('test_app_events_publish_failed_total', { type: 'a.changed' })).toBe(1);
    expect(s.value('test_app_events_published_total', { type: 'b.changed' })).toBe(0);
  });
});

describe('metricsListener', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const metrics = metricsOf();
    eventCounters(metrics, ['a.changed']);
    server = createServer(metricsListener(metrics.registry));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = (method: string, path: string) =>
    new Promise<{ status: number; body: string; allow?: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, allow: res.headers['allow'] }),
        );
      });
      req.on('error', reject);
      req.end();
    });

  it('when GET /metrics, then it serves the registry; any other path is 404 and any other method 405', async () => {
    const ok = await call('GET', '/metrics?x=1');
    expect(ok.status).toBe(200);
    expect(
      new Scrape(ok.body).value('test_app_events_published_total', { type: 'a.changed' }),
    ).toBe(0);
    expect((await call('GET', '/api/v1/treatmentGroup')).status).toBe(404);
    const post = await call('POST', '/metrics');
    expect(post.status).toBe(405);
    expect(post.allow).toBe('GET, HEAD');
    expect((await call('HEAD', '/metrics')).body).toBe('');
  });
});
