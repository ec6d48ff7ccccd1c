import { EventEmitter } from 'node:events';
import { AppError, internalError, serviceUnavailable } from '@nhp/shared-errors';
import { createLogger } from '@nhp/shared-logger';
import { createShutdown, handleProcessErrors, type ProcessEvents } from '../src';

const FNR = '13116900216';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJjbGllbnRfaWQiOiJ4In0.c2lnbmF0dXJlLWJ5dGVz';

function captureLogs() {
  const lines: Array<Record<string, unknown>> = [];
  const text: string[] = [];
  const logger = createLogger({
    name: 'test',
    level: 'debug',
    destination: {
      write: (chunk: string) => {
        text.push(chunk);
        lines.push(JSON.parse(chunk) as Record<string, unknown>);
      },
    },
  });
  return { logger, lines, text: () => text.join('') };
}

function policy() {
  const logs = captureLogs();
  const events = new EventEmitter();
  const fail = jest.fn(() => Promise.resolve());
  const remove = handleProcessErrors({
    logger: logs.logger,
    shutdown: { fail },
    events: events as unknown as ProcessEvents,
  });
  return { ...logs, events, fail, remove };
}

describe('handleProcessErrors', () => {
  it('when a programmer error escapes as an unhandled rejection, then it is logged at fatal with its stack, without identity numbers or credentials, and the process shuts down failing', () => {
    const { events, fail, lines, text } = policy();
    const err = Object.assign(
      new TypeError(
        `cannot read properties of undefined (citizen ${FNR}, Authorization: Bearer ${JWT}, mongodb://admin:hunter2@db/nhp, apiKey=k-123)`,
      ),
      { innbyggerFnr: FNR, token: JWT, request: { headers: { authorization: `Bearer ${JWT}` } } },
    );
    events.emit('unhandledRejection', err);

    expect(fail).toHaveBeenCalledWith('unhandledRejection');
    const line = lines.find((l) => l['level'] === 60);
    expect(line).toMatchObject({
      msg: 'unhandled rejection of a programmer error; shutting down',
      origin: 'unhandledRejection',
      err: { type: 'TypeError', message: expect.stringContaining('cannot read properties') },
    });
    expect(String((line?.['err'] as { stack?: unknown }).stack)).toContain(
      'process-errors.spec.ts',
    );
    expect(text()).not.toContain(FNR);
    expect(text()).not.toContain(JWT);
    expect(text()).not.toContain('hunter2');
    expect(text()).not.toContain('k-123');
  });

  it('when an operational AppError escapes as an unhandled rejection, then it is logged at error and the process carries on', () => {
    const { events, fail, lines } = policy();
    events.emit(
      'unhandledRejection',
      serviceUnavailable('DATABASE_UNAVAILABLE', `MongoDB refused while reading ${FNR}`),
    );
    expect(fail).not.toHaveBeenCalled();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'unhandled rejection of an operational error; carrying on',
      code: 'DATABASE_UNAVAILABLE',
    });
    expect(JSON.stringify(lines)).not.toContain(FNR);
  });

  it('when a non-operational AppError or a value that is not an Error escapes as a rejection, then it is fatal', () => {
    const { events, fail, lines, text } = policy();
    events.emit('unhandledRejection', internalError('BUG', 'a bug'));
    events.emit(
      'unhandledRejection',
      new AppError({ code: 'X', status: 400, message: 'm', operational: false }),
    );
    events.emit('unhandledRejection', { innbyggerFnr: FNR, note: `for ${FNR}` });
    events.emit('unhandledRejection', `failed for ${FNR}`);
    expect(fail).toHaveBeenCalledTimes(4);
    expect(lines.filter((l) => l['level'] === 60)).toHaveLength(4);
    expect(lines[2]).toMatchObject({ err: { rejectedWith: 'object' } });
    expect(lines[3]).toMatchObject({
      err: { rejectedWith: 'string', value: 'failed for [Redacted]' },
    });
    expect(text()).not.toContain(FNR);
  });

  it('when an exception is uncaught, then it is fatal even if operational (the stack it unwound is gone)', () => {
    const { events, fail, lines } = policy();
    events.emit(
      'uncaughtException',
      serviceUnavailable('DATABASE_UNAVAILABLE', 'down'),
      'uncaughtException',
    );
    expect(fail).toHaveBeenCalledWith('uncaughtException');
    expect(lines[0]).toMatchObject({
      level: 60,
      msg: 'uncaught exception; shutting down',
      err: { type: 'AppError', code: 'DATABASE_UNAVAILABLE' },
    });
  });

  it('when an error has causes, then their messages are scrubbed too', () => {
    const { events, text } = policy();
    events.emit(
      'unhandledRejection',
      new Error('outer', { cause: new Error(`inner for ${FNR}`, { cause: `secret=${JWT}` }) }),
    );
    expect(text()).toContain('inner for [Redacted]');
    expect(text()).not.toContain(FNR);
    expect(text()).not.toContain(JWT);
  });

  it('when removed, then it no longer listens', () => {
    const { events, fail, remove } = policy();
    remove();
    expect(events.listenerCount('unhandledRejection')).toBe(0);
    expect(events.listenerCount('uncaughtException')).toBe(0);
    expect(fail).not.toHaveBeenCalled();
  });
});

describe('Shutdown.fail and install({ processErrors })', () => {
  it('when a failure stops the process, then every step runs and the exit code is 1', async () => {
    const { logger, lines } = captureLogs();
    const exit = jest.fn();
    const step = jest.fn();
    await createShutdown({
      logger,
      timeoutMs: 60_000,
      exit,
      steps: [{ name: 'close', run: step }],
    }).fail('unhandledRejection');
    expect(step).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(1);
    expect(lines[0]).toMatchObject({ msg: 'shutdown started', signal: 'unhandledRejection' });
    expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete', exitCode: 1 });
  });

  it('when a failure comes while a signal’s shutdown runs, then the steps run once and the exit code is 1', async () => {
    const { logger } = captureLogs();
    const exit = jest.fn();
    let release!: () => void;
    const step = jest.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const shutdown = createShutdown({
      logger,
      timeoutMs: 60_000,
      exit,
      steps: [{ name: 'close', run: step }],
    });
    const bySignal = shutdown.run('SIGTERM');
    const byFailure = shutdown.fail('uncaughtException');
    await Promise.resolve();
    release();
    await Promise.all([bySignal, byFailure]);
    expect(step).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(1);
  });

  it('when installed with processErrors, then it listens for both process events until uninstalled', () => {
    const { logger } = captureLogs();
    const before = {
      rejection: process.listenerCount('unhandledRejection'),
      exception: process.listenerCount('uncaughtException'),
    };
    const shutdown = createShutdown({ logger, timeoutMs: 1000, exit: jest.fn(), steps: [] });
    shutdown.install({ processErrors: true });
    shutdown.install({ processErrors: true });
    try {
      expect(process.listenerCount('unhandledRejection')).toBe(before.rejection + 1);
      expect(process.listenerCount('uncaughtException')).toBe(before.exception + 1);
    } finally {
      shutdown.uninstall();
    }
    expect(process.listenerCount('unhandledRejection')).toBe(before.rejection);
    expect(process.listenerCount('uncaughtException')).toBe(before.exception);
  });
});
