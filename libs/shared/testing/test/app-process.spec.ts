import { createConnection } from 'node:net';
import { startAppProcess } from '../src';

const ENTRY = 'libs/shared/testing/test/fixtures/tiny-app.ts';

function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

describe('startAppProcess', () => {
  const saved = process.env['MONGO_URL'];
  afterAll(() => {
    if (saved === undefined) delete process.env['MONGO_URL'];
    else process.env['MONGO_URL'] = saved;
  });

  it('when the app gets healthy, then it serves on the port it was given, its JSON lines are kept, and stop ends it with its own exit code', async () => {
    process.env['MONGO_URL'] = 'mongodb://from-the-shell:27017/x';
    const app = await startAppProcess({ entry: ENTRY, portVariable: 'FIXTURE_PORT' });
    try {
      expect(app.url).toBe(`http://127.0.0.1:${app.port}`);
      expect((await fetch(`${app.url}/health`)).status).toBe(200);
      const listening = await app.waitForLog('listening');
      expect(listening).toMatchObject({ port: app.port, mongoUrl: null }); // nothing inherited
      expect(app.lines.every((l) => typeof l['msg'] === 'string')).toBe(true);
      expect(app.output()).toContain('not a JSON line');
    } finally {
      expect(await app.stop()).toEqual({ code: 0, signal: null });
    }
    expect(app.running).toBe(false);
    expect(app.lines.map((l) => l['msg'])).toContain('stopping');
    expect(await portOpen(app.port as number)).toBe(false);
  }, 60_000);

  it('when it is killed, then kill resolves with the signal once the process is gone', async () => {
    const app = await startAppProcess({ entry: ENTRY, portVariable: 'FIXTURE_PORT' });
    expect(await app.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await portOpen(app.port as number)).toBe(false);
    await expect(app.waitForLog('never logged')).rejects.toThrow(/exited/);
  }, 60_000);

  it('when the app exits before it is healthy, then start rejects with its output', async () => {
    await expect(
      startAppProcess({
        entry: ENTRY,
        portVariable: 'FIXTURE_PORT',
        env: { FIXTURE_FAIL: 'no database' },
      }),
    ).rejects.toThrow(/exited 3[\s\S]*tiny-app failed to start: no database/);
  }, 60_000);
});
