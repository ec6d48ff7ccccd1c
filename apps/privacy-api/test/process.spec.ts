/**
 * The app as a process: configuration failures and the graceful shutdown sequence, observed the
 * way an operator sees them (exit code, stderr, health probe).
 */
import { useTestInfra } from '@nhp/shared-testing';
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
    const app = await runApp({
      MONGO_URL: infra.get().mongoUri,
      NATS_URL: infra.get().natsUrl,
    });
    expect(await app.healthy()).toBe(true);

    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    await expect(fetch(`${app.url}/health`)).rejects.toThrow();
  }, 60_000);
});
