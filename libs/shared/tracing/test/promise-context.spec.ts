import { EventEmitter } from 'node:events';
import { createContextKey, ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { asyncContextFrames } from '../src';
import { PromiseContextManager } from '../src/promise-context';

// The manager on its own (not registered globally): each test asks it, not the API, what is active.
const KEY = createContextKey('test.request');
const named = (name: string): Context => ROOT_CONTEXT.setValue(KEY, name);
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PromiseContextManager', () => {
  const manager = new PromiseContextManager();
  const seen = () => manager.active().getValue(KEY);
  beforeAll(() => manager.enable());
  afterAll(() => manager.disable());

  it('when nothing entered a context, then the root context is active', () => {
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it('when with() runs a function, then the context is active inside it, and the one before after it, also when it throws', () => {
    const inside = manager.with(named('a'), () => seen());
    expect(inside).toBe('a');
    expect(manager.active()).toBe(ROOT_CONTEXT);
    expect(() =>
      manager.with(named('a'), () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(manager.active()).toBe(ROOT_CONTEXT);
    expect(manager.with(named('a'), () => manager.with(named('b'), seen))).toBe('b');
  });

  it('when an async function awaits, then it resumes in the context it was called in', async () => {
    const steps: unknown[] = [];
    const work = async () => {
      steps.push(seen());
      await tick();
      steps.push(seen());
      await Promise.resolve(1);
      steps.push(seen());
      await new Promise((resolve) => setTimeout(resolve, 1));
      steps.push(seen());
    };
    await manager.with(named('a'), work);
    expect(steps).toEqual(['a', 'a', 'a', 'a']);
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it('when requests interleave, then each one sees its own context at every step', async () => {
    const log: string[] = [];
    const request = async (name: string, delays: number[]) => {
      for (const delay of delays) {
        await new Promise((resolve) => setTimeout(resolve, delay));
        log.push(`${name}:${String(seen())}`);
        await Promise.all([tick(), Promise.resolve()]);
        log.push(`${name}:${String(seen())}`);
      }
    };
    await Promise.all([
      manager.with(named('a'), () => request('a', [3, 0, 2])),
      manager.with(named('b'), () => request('b', [0, 3, 1])),
      request('none', [1, 1, 1]),
    ]);
    expect(log.filter((line) => line.startsWith('a:'))).toEqual(Array(6).fill('a:a'));
    expect(log.filter((line) => line.startsWith('b:'))).toEqual(Array(6).fill('b:b'));
    expect(log.filter((line) => line.startsWith('none:'))).toEqual(Array(6).fill('none:undefined'));
  });

  it('when a then callback, an async generator or a rejection handler runs, then it runs in the context the promise chain was made in', async () => {
    const thenSeen = await manager.with(named('a'), () => tick().then(() => seen()));
    expect(thenSeen).toBe('a');

    async function* numbers() {
      yield seen();
      await tick();
      yield seen();
    }
    const generated = await manager.with(named('b'), async () => {
      const out: unknown[] = [];
      for await (const value of numbers()) out.push(value, seen());
      return out;
    });
    expect(generated).toEqual(['b', 'b', 'b', 'b']);

    const caught = await manager.with(named('c'), () =>
      Promise.reject(new Error('no')).catch(() => seen()),
    );
    expect(caught).toBe('c');
  });

  it('when a promise made outside any context is awaited inside one, then the code after the await is in the awaiting context', async () => {
    const outside = new Promise<void>((resolve) => setTimeout(resolve, 2));
    const after = await manager.with(named('a'), async () => {
      await outside;
      return seen();
    });
    expect(after).toBe('a');
  });

  it('when the work of a context is over, then no later callback or promise job sees it', async () => {
    let late: unknown = 'unset';
    await manager.with(named('a'), async () => {
      await tick();
    });
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        late = seen();
        resolve();
      }),
    );
    expect(late).toBeUndefined();
    expect(await Promise.resolve().then(seen)).toBeUndefined();
  });

  it('when a callback of a timer or an emitter runs, then it is in the root context unless bound', async () => {
    const emitter = new EventEmitter();
    const heard: unknown[] = [];
    manager.with(named('a'), () => {
      emitter.on('plain', () => heard.push(seen()));
      manager.bind(manager.active(), emitter);
      emitter.on('bound', () => heard.push(seen()));
    });
    emitter.emit('plain');
    emitter.emit('bound');
    const timer = await manager.with(
      named('a'),
      () => new Promise((resolve) => setTimeout(() => resolve(seen()), 1)),
    );
    const bound = await manager.with(
      named('a'),
      () =>
        new Promise((resolve) =>
          setTimeout(
            manager.bind(named('b'), () => resolve(seen())),
            1,
          ),
        ),
    );
    // The emitter was bound after its first listener was added: only later listeners are bound.
    expect(heard).toEqual([undefined, 'a']);
    expect(timer).toBeUndefined();
    expect(bound).toBe('b');
  });

  it('when attach() is disposed, then the context before it is active again', () => {
    const token = manager.attach(named('a'));
    expect(seen()).toBe('a');
    token.dispose();
    token.dispose();
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it('when disabled, then promises carry no context any more, and enabled again they do', async () => {
    const other = new PromiseContextManager().enable();
    other.disable();
    const lost = await other.with(named('a'), async () => {
      await tick();
      return other.active().getValue(KEY);
    });
    expect(lost).toBeUndefined();
    other.enable();
    const kept = await other.with(named('a'), async () => {
      await tick();
      return other.active().getValue(KEY);
    });
    other.disable();
    expect(kept).toBe('a');
  });
});

describe('asyncContextFrames', () => {
  it.each([
    ['20.20.2', [], false],
    ['22.12.0', [], false],
    ['22.12.0', ['--experimental-async-context-frame'], true],
    ['24.21.0', [], true],
    ['24.21.0', ['--no-async-context-frame'], false],
    ['26.1.0', [], true],
  ])(
    'when Node is %s with flags %j, then AsyncLocalStorage uses async context frames: %s',
    (version, flags, expected) => {
      expect(asyncContextFrames(version, flags)).toBe(expected);
    },
  );
});
