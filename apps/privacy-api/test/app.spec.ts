import request from 'supertest';
import { usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();

describe('privacy-api app shell', () => {
  it('when MongoDB and NATS are up, then GET /health is 200 with no body', async () => {
    const res = await request(h.get().app).get('/health');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it('when NATS is down, then GET /health is 503, and 200 again once it is back', async () => {
    const { app, infra } = h.get();
    await infra.stopNats();
    try {
      let status = 0;
      for (let i = 0; i < 50 && status !== 503; i++) {
        status = (await request(app).get('/health')).status;
        if (status !== 503) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(503);
    } finally {
      await infra.startNats();
    }
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await request(app).get('/health')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });

  it('when a request carries X-Request-Id, then the response echoes it', async () => {
    const res = await request(h.get().app).get('/health').set('X-Request-Id', 'abc-123');
    expect(res.headers['x-request-id']).toBe('abc-123');
  });
});
