/**
 * The app as a process: configuration failures and the graceful shutdown sequence, observed the
 * way an operator sees them (exit code, stderr, health probe).
 */
import {
  FAULT_SECRETS,
  freePort,
  processFaultsPreload,
  scrapeMetrics,
  useTestInfra,
} from '@nhp/shared-testing';
import { runApp } from './support/app-process';

const infra = useTestInfra();

describe('privacy-api process', () => {
  it('when variables are invalid, then it exits non-zero with one message naming each of them', async () => {
    const app = await runApp({
      PRIVACY_API_PORT: 'abc',
      MONGO_URL: 'http://not-mongo',
      SHUTDOWN_TIMEOUT_MS: '-5',
    });
    const code = await app.exited;
    expect(code).not.toBe(0);
    const message = app.stderr();
    expect(message).toContain('PRIVACY_API_PORT');
    expect(message).toContain('MONGO_URL');
    expect(message).toContain('SHUTDOWN_TIMEOUT_MS');
    expect(message).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('when it receives SIGTERM, then it stops serving, closes its connections and exits 0', async () => {
    const metricsPort = await freePort();
    const app = await runApp({
      MONGO_URL: infra.get().mongoUri,
      NATS_URL: infra.get().natsUrl,
      PRIVACY_API_METRICS_PORT: String(metricsPort),
    });
    expect(await app.healthy()).toBe(true);
    // PRIVACY_API_METRICS_PORT: /metrics there (with the process metrics), not on the API port.
    const metrics = await scrapeMetrics(`http://127.0.0.1:${metricsPort}`);
    expect(metrics.value('privacy_api_mongodb_connected')).toBe(1);
    expect(metrics.family('process_cpu_seconds_total')?.type).toBe('COUNTER');
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401);

    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    await expect(fetch(`${app.url}/health`)).rejects.toThrow();
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  }, 60_000);

  function runFaulty(fault: string) {
    return runApp(
      {
        MONGO_URL: infra.get().mongoUri,
        NATS_URL: infra.get().natsUrl,
        LOG_LEVEL: 'info',
        TEST_PROCESS_FAULT: fault,
      },
      { preload: [processFaultsPreload] },
    );
  }

  it.each(['programmer-rejection', 'uncaught-exception'])(
    'when the fault %s escapes every handler, then it logs fatal without the identity number or token, runs its shutdown steps and exits 1',
    async (fault) => {
      const app = await runFaulty(fault);
      expect(await app.healthy()).toBe(true);

      app.child.kill('SIGUSR2');
      expect(await app.exited).toBe(1);
      const lines = app.lines();
      const fatal = lines.find((l) => l['level'] === 60);
      expect(fatal).toMatchObject({
        msg: expect.stringMatching(/shutting down$/),
        err: { message: expect.any(String), stack: expect.any(String) },
      });
      const steps = lines.filter((l) => l['msg'] === 'shutdown step done').map((l) => l['step']);
      expect(steps).toEqual(['readiness', 'http', 'journal', 'nats', 'mongo']);
      expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete', exitCode: 1 });
      expect(app.output()).not.toContain(FAULT_SECRETS.fnr);
      expect(app.output()).not.toContain(FAULT_SECRETS.token);
      await expect(fetch(`${app.url}/health`)).rejects.toThrow();
    },
    60_000,
  );

  it('when an operational error escapes as an unhandled rejection, then it is logged at error and the service keeps serving until SIGTERM (exit 0)', async () => {
    const app = await runFaulty('operational-rejection');
    expect(await app.healthy()).toBe(true);

    app.child.kill('SIGUSR2');
    let logged: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !logged; i++) {
      logged = app.lines().find((l) => l['code'] === 'DATABASE_UNAVAILABLE');
      if (!logged) await new Promise((r) => setTimeout(r, 50));
    }
    expect(logged).toMatchObject({
      level: 50,
      msg: 'unhandled rejection of an operational error; carrying on',
    });
    expect((await fetch(`${app.url}/health`)).status).toBe(200);

    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(app.lines().some((l) => l['level'] === 60)).toBe(false);
    expect(app.output()).not.toContain(FAULT_SECRETS.fnr);
  }, 60_000);
});
