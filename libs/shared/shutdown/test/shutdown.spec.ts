import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createHealth, healthRouter } from '@nhp/shared-health';
import {
  closeServer,
  createHttpApp,
  listen,
  serverPort,
  type ErrorFormatter,
} from '@nhp/shared-http';
import { createLogger } from '@nhp/shared-logger';
import { createShutdown, type ShutdownStep } from '../src';

/** Shared code brings no app's error body; this test only needs one. */
const codeOnlyFormatter: ErrorFormatter = (err) => ({
  status: err.status,
  contentType: 'application/json',
  body: { code: err.code },
});

function captureLogs() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    name: 'test',
    destination: {
      write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>),
    },
  });
  return { logger, lines };
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('createShutdown', () => {
  it('when run, then the steps run in order and the process exits 0', async () => {
    const { logger, lines } = captureLogs();
    const order: string[] = [];
    const exit = jest.fn();
    const step = (name: string): ShutdownStep => ({
      name,
      run: async () => {
        await Promise.resolve();
        order.push(name);
      },
    });
    await createShutdown({
      logger,
      timeoutMs: 60_000,
      exit,
      steps: [
        step('mark not ready'),
        step('close HTTP server'),
        step('drain NATS'),
        step('close MongoDB'),
      ],
    }).run('SIGTERM');
    expect(order).toEqual(['mark not ready', 'close HTTP server', 'drain NATS', 'close MongoDB']);
    expect(exit).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(0);
    expect(lines[0]).toMatchObject({ msg: 'shutdown started', signal: 'SIGTERM' });
    expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete', failedSteps: 0 });
  });

  it('when a step fails, then it is logged with its error and the later steps still run', async () => {
    const { logger, lines } = captureLogs();
    const ran: string[] = [];
    const exit = jest.fn();
    await createShutdown({
      logger,
      timeoutMs: 60_000,
      exit,
      steps: [
        {
          name: 'drain NATS',
          run: () => {
            throw new Error('connection closed');
          },
        },
        { name: 'close MongoDB', run: () => void ran.push('close MongoDB') },
      ],
    }).run();
    expect(ran).toEqual(['close MongoDB']);
    const failure = lines.find((l) => l['msg'] === 'shutdown step failed');
    expect(failure).toMatchObject({
      level: 50,
      step: 'drain NATS',
      err: { message: 'connection closed' },
    });
    expect(exit).toHaveBeenCalledWith(0);
  });

  it('when the steps outlast the timeout, then the process exits 1 and the stuck step is named', async () => {
    const { logger, lines } = captureLogs();
    const exit = jest.fn();
    const later = jest.fn();
    await createShutdown({
      logger,
      timeoutMs: 20,
      exit,
      steps: [
        { name: 'drain NATS', run: () => new Promise<void>(() => undefined) },
        { name: 'close MongoDB', run: later },
      ],
    }).run();
    expect(exit).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(1);
    expect(later).not.toHaveBeenCalled();
    expect(lines.find((l) => l['msg'] === 'shutdown timed out; exiting with code 1')).toMatchObject(
      {
        level: 50,
        step: 'drain NATS',
      },
    );
  });

  it('when run is called again, then the steps do not run twice', async () => {
    const { logger } = captureLogs();
    const step = jest.fn();
    const exit = jest.fn();
    const shutdown = createShutdown({
      logger,
      timeoutMs: 60_000,
      exit,
      steps: [{ name: 'close', run: step }],
    });
    await Promise.all([shutdown.run('SIGTERM'), shutdown.run('SIGINT')]);
    expect(step).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledTimes(1);
  });

  it('when SIGTERM then SIGINT arrive, then one shutdown runs and the second signal is logged and ignored', async () => {
    const { logger, lines } = captureLogs();
    const release = deferred();
    const done = deferred();
    const step = jest.fn(() => release.promise);
    const exit = jest.fn(() => done.resolve());
    const before = { term: process.listenerCount('SIGTERM'), int: process.listenerCount('SIGINT') };
    const shutdown = createShutdown({
      logger,
      timeoutMs: 60_000,
      exit,
      steps: [{ name: 'close HTTP server', run: step }],
    });
    shutdown.install();
    shutdown.install();
    try {
      expect(process.listenerCount('SIGTERM')).toBe(before.term + 1);
      // process.emit calls the handlers exactly as a delivered signal would, without signalling the test runner.
      process.emit('SIGTERM', 'SIGTERM');
      process.emit('SIGINT', 'SIGINT');
      release.resolve();
      await done.promise;
      expect(step).toHaveBeenCalledTimes(1);
      expect(exit).toHaveBeenCalledWith(0);
      expect(
        lines.find((l) => l['msg'] === 'shutdown already in progress; signal ignored'),
      ).toMatchObject({
        level: 40,
        signal: 'SIGINT',
      });
    } finally {
      shutdown.uninstall();
    }
    expect(process.listenerCount('SIGTERM')).toBe(before.term);
    expect(process.listenerCount('SIGINT')).toBe(before.int);
  });
});

describe('shutdown of a real HTTP service', () => {
  it('when shutdown starts during a slow request, then readiness turns 503, the request completes and the process exits 0', async () => {
    const { logger } = captureLogs();
    const health = createHealth({ checks: { mongo: () => true } });
    const started = deferred();
    const release = deferred();
    const app = createHttpApp({
      logger,
      errorFormatter: codeOnlyFormatter,
      health: healthRouter(health, { probes: true }),
      routes: (app) => {
        app.get('/slow', async (_req, res) => {
          started.resolve();
          await release.promise;
          res.json({ done: true });
        });
      },
    });
    const server = await listen(app, 0, '127.0.0.1');
    const port = serverPort(server);
    const get = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          })
          .on('error', reject);
      });

    expect((await get('/readyz')).status).toBe(200);
    const slow = get('/slow');
    await started.promise;

    const readinessAfterMark = deferred<number>();
    const exit = jest.fn();
    const shutdown = createShutdown({
      logger,
      timeoutMs: 60_000,
      exit,
      steps: [
        { name: 'mark not ready', run: () => health.markShuttingDown() },
        // What a load balancer would see between "not ready" and "server closed".
        {
          name: 'probe',
          run: async () => readinessAfterMark.resolve((await get('/readyz')).status),
        },
        { name: 'close HTTP server', run: () => closeServer(server, 60_000) },
      ],
    });
    const running = shutdown.run('SIGTERM');
    expect(await readinessAfterMark.promise).toBe(503);
    release.resolve();
    expect(await slow).toEqual({ status: 200, body: '{"done":true}' });
    await running;
    expect(exit).toHaveBeenCalledWith(0);
    expect(server.listening).toBe(false);
  });
});

describe('shutdown of a real process', () => {
  const repoRoot = path.resolve(__dirname, '../../../..');

  /**
   * Starts the fixture, sends `signal` once it is ready, and collects its exit code and log lines
   * (and all it wrote, for what must not be in it).
   */
  function runFixture(env: Record<string, string>, signal: NodeJS.Signals) {
    return new Promise<{
      code: number | null;
      lines: Array<Record<string, unknown>>;
      output: string;
    }>((resolve, reject) => {
      const child = spawn(
        path.join(repoRoot, 'node_modules/.bin/tsx'),
        ['--tsconfig', 'tsconfig.base.json', path.join(__dirname, 'fixtures/service.ts')],
        {
          cwd: repoRoot,
          env: { PATH: process.env['PATH'] ?? '', ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8');
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        if (/^ready$/m.test(out) && !child.killed) child.kill(signal);
      });
      child.on('error', reject);
      child.on('exit', (code) =>
        resolve({
          code,
          lines: out
            .split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => JSON.parse(line) as Record<string, unknown>),
          output: out + err,
        }),
      );
    });
  }

  it('when the process gets SIGTERM, then it runs its steps and exits 0 with its logs flushed', async () => {
    const { code, lines } = await runFixture({}, 'SIGTERM');
    expect(code).toBe(0);
    expect(lines.map((l) => l['msg'])).toEqual([
      'shutdown started',
      'shutdown step done',
      'shutdown step done',
      'shutdown complete',
    ]);
  });

  it('when a step hangs past the timeout, then the process exits 1', async () => {
    const { code, lines } = await runFixture(
      { STUCK_STEP: '1', SHUTDOWN_TIMEOUT_MS: '200' },
      'SIGINT',
    );
    expect(code).toBe(1);
    expect(lines.at(-1)).toMatchObject({
      msg: 'shutdown timed out; exiting with code 1',
      step: 'stuck',
    });
  });

  it('when a programmer error escapes as an unhandled rejection, then the process logs it at fatal, runs its steps and exits 1', async () => {
    const { code, lines, output } = await runFixture(
      { PROCESS_ERRORS: '1', FAULT: 'programmer-rejection' },
      'SIGTERM',
    );
    expect(code).toBe(1);
    expect(lines.map((l) => l['msg'])).toEqual([
      'unhandled rejection of a programmer error; shutting down',
      'shutdown started',
      'shutdown step done',
      'shutdown step done',
      'shutdown complete',
    ]);
    expect(lines[0]).toMatchObject({ level: 60, err: { type: 'TypeError' } });
    expect(lines.at(-1)).toMatchObject({ exitCode: 1 });
    expect(output).not.toContain('13116900216');
  });

  it('when an exception is uncaught, then the process logs it at fatal, runs its steps and exits 1', async () => {
    const { code, lines, output } = await runFixture(
      { PROCESS_ERRORS: '1', FAULT: 'uncaught-exception' },
      'SIGTERM',
    );
    expect(code).toBe(1);
    expect(lines[0]).toMatchObject({ level: 60, msg: 'uncaught exception; shutting down' });
    expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete', exitCode: 1 });
    expect(output).not.toContain('13116900216');
  });

  it('when an operational error escapes as an unhandled rejection, then it is logged at error and the process carries on until its signal (exit 0)', async () => {
    const { code, lines, output } = await runFixture(
      { PROCESS_ERRORS: '1', FAULT: 'operational-rejection' },
      'SIGTERM',
    );
    expect(code).toBe(0);
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'unhandled rejection of an operational error; carrying on',
      code: 'DATABASE_UNAVAILABLE',
    });
    expect(lines[1]).toMatchObject({ msg: 'shutdown started', signal: 'SIGTERM' });
    expect(lines.some((l) => l['level'] === 60)).toBe(false);
    expect(output).not.toContain('13116900216');
  });
});
