import express from 'express';
import request from 'supertest';
import { createLogger } from '@nhp/shared-logger';
import { createHealth, healthRouter, type Health } from '../src';

const never = () => new Promise<boolean>(() => undefined);

describe('createHealth', () => {
  it('when every check passes, then readiness is true with each check listed', async () => {
    const health = createHealth({ checks: { mongo: () => true, nats: async () => true } });
    expect(health.isLive()).toBe(true);
    expect(await health.readiness()).toEqual({
      ready: true,
      degraded: [],
      checks: { mongo: true, nats: true },
      shuttingDown: false,
    });
  });

  it('when a check throws, rejects, hangs or answers false, then that check is false and readiness is false', async () => {
    const health = createHealth({
      checkTimeoutMs: 20,
      checks: {
        ok: () => true,
        throws: () => {
          throw new Error('boom');
        },
        rejects: () => Promise.reject(new Error('boom')),
        hangs: never,
        no: () => false,
      },
    });
    expect(await health.readiness()).toEqual({
      ready: false,
      degraded: [],
      checks: { ok: true, throws: false, rejects: false, hangs: false, no: false },
      shuttingDown: false,
    });
  });

  it('when a non-critical check fails, then the service stays ready and names it as degraded', async () => {
    let brokerUp = false;
    const health = createHealth({
      checks: { mongo: () => true, broker: { check: () => brokerUp, critical: false } },
    });
    expect(await health.readiness()).toEqual({
      ready: true,
      degraded: ['broker'],
      checks: { mongo: true, broker: false },
      shuttingDown: false,
    });
    brokerUp = true;
    expect(await health.readiness()).toMatchObject({ ready: true, degraded: [] });
  });

  it('when a critical check fails beside a non-critical one, then readiness is false', async () => {
    const health = createHealth({
      checks: {
        mongo: { check: () => false },
        broker: { check: () => false, critical: false },
      },
    });
    expect(await health.readiness()).toMatchObject({ ready: false, degraded: ['broker'] });
  });

  it('when a dependency recovers, then readiness follows without a restart', async () => {
    let up = false;
    const health = createHealth({ checks: { mongo: () => up } });
    expect((await health.readiness()).ready).toBe(false);
    up = true;
    expect((await health.readiness()).ready).toBe(true);
  });

  it('when shutdown has begun, then readiness is false even with healthy checks', async () => {
    const check = jest.fn(() => true);
    const health = createHealth({ checks: { mongo: check } });
    health.markShuttingDown();
    expect(health.isShuttingDown()).toBe(true);
    expect(await health.readiness()).toEqual({
      ready: false,
      degraded: [],
      checks: {},
      shuttingDown: true,
    });
    expect(check).not.toHaveBeenCalled();
  });

  it('when probes overlap, then one evaluation answers them all', async () => {
    let calls = 0;
    let release!: (value: boolean) => void;
    let markCalled!: () => void;
    const called = new Promise<void>((resolve) => (markCalled = resolve));
    const health = createHealth({
      checks: {
        mongo: () => {
          calls += 1;
          markCalled();
          return new Promise<boolean>((resolve) => (release = resolve));
        },
      },
    });
    const first = health.readiness();
    await called;
    const second = health.readiness();
    release(true);
    expect(await Promise.all([first, second])).toEqual([
      expect.objectContaining({ ready: true }),
      expect.objectContaining({ ready: true }),
    ]);
    expect(calls).toBe(1);
    await health.readiness();
    expect(calls).toBe(2);
  });

  it('when a check fails and later recovers, then each transition is logged once', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      name: 't',
      destination: { write: (s: string) => void lines.push(JSON.parse(s)) },
    });
    let up = true;
    const health = createHealth({ checks: { nats: () => up }, logger });
    await health.readiness();
    up = false;
    await health.readiness();
    await health.readiness();
    up = true;
    await health.readiness();
    expect(lines.map((l) => [l['level'], l['msg'], l['check']])).toEqual([
      [40, 'readiness check failing', 'nats'],
      [30, 'readiness check recovered', 'nats'],
    ]);
  });
});

function appWith(health: Health, style: 'health-only' | 'probes') {
  const app = express();
  app.use(healthRouter(health, { probes: style === 'probes' }));
  return app;
}

describe('healthRouter', () => {
  const healthy = () => createHealth({ checks: { mongo: () => true } });
  const unhealthy = () => createHealth({ checks: { mongo: () => true, nats: () => false } });

  it('when healthy, then GET /health is 200 with no body', async () => {
    const res = await request(appWith(healthy(), 'health-only')).get('/health');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['content-length']).toBe('0');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('when not healthy or shutting down, then GET /health is 503 with no body', async () => {
    expect((await request(appWith(unhealthy(), 'health-only')).get('/health')).status).toBe(503);
    const stopping = healthy();
    stopping.markShuttingDown();
    const res = await request(appWith(stopping, 'probes')).get('/health');
    expect(res.status).toBe(503);
    expect(res.text).toBe('');
  });

  it('when probes are off, then /livez and /readyz do not exist', async () => {
    const app = appWith(healthy(), 'health-only');
    expect((await request(app).get('/livez')).status).toBe(404);
    expect((await request(app).get('/readyz')).status).toBe(404);
  });

  it('when the style is probes, then /livez is 200 even while dependencies are down', async () => {
    const res = await request(appWith(unhealthy(), 'probes')).get('/livez');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('when the style is probes, then /readyz reports each check with 200 or 503', async () => {
    const ok = await request(appWith(healthy(), 'probes')).get('/readyz');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: 'ok', checks: { mongo: true } });

    const down = await request(appWith(unhealthy(), 'probes')).get('/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', checks: { mongo: true, nats: false } });
  });

  it('when only a non-critical check fails, then /health and /readyz are 200 and /readyz says degraded', async () => {
    const health = createHealth({
      checks: { mongo: () => true, broker: { check: () => false, critical: false } },
    });
    const app = appWith(health, 'probes');
    expect((await request(app).get('/health')).status).toBe(200);
    const res = await request(app).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'degraded',
      checks: { mongo: true, broker: false },
      degraded: ['broker'],
    });
  });

  it('when shutting down, then /readyz says so', async () => {
    const health = healthy();
    health.markShuttingDown();
    const res = await request(appWith(health, 'probes')).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'shutting-down', checks: {} });
  });
});
