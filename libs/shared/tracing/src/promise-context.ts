import { promiseHooks } from 'node:v8';
import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

type Tagged = Record<symbol, Context | undefined>;

/**
 * The root context, read once: the hooks below run for every promise of the process, and the API's
 * `ROOT_CONTEXT` is a re-export getter, which a bundle calls at each use.
 */
const ROOT: Context = ROOT_CONTEXT;

/**
 * The active OpenTelemetry context, carried from a function to the promises it makes and so
 * across every `await` and `.then`: V8's promise hooks tag each promise with the context it was
 * made in, and a promise job runs in its promise's context. Synchronous code sees the context of
 * the `context.with` around it.
 *
 * Why not the SDK's AsyncLocalStorageContextManager: on Node 20, AsyncLocalStorage runs Node's
 * async hooks on every promise of the process once any context is entered (an async id per promise,
 * the execution resource looked up, the store copied), whether the request is sampled or not. That
 * was about 7% of a status check's CPU with tracing on (tools/bench/README.md, privacy-api); these
 * hooks do one property write per promise and a save and restore per promise job. Node 24's
 * AsyncLocalStorage (AsyncContextFrame) no longer needs hooks; on that runtime this manager can
 * give way to the SDK's.
 *
 * What it does not carry, unlike AsyncLocalStorage: callbacks of timers, `setImmediate`,
 * `process.nextTick` and event emitters run in the root context. Code that needs a context there
 * enters it itself (`context.with`, `context.bind`, as the coalesced reads and batched writes do).
 * Stream events never carried the request's context under AsyncLocalStorage either (an
 * IncomingMessage's 'end' runs in its parser's resource), so the code relies on promises already.
 *
 * `bind` (functions and event emitters) is the SDK's: inherited, it enters contexts through this
 * manager's `with`. Nothing of AsyncLocalStorage is used: its storage is never entered.
 */
export class PromiseContextManager extends AsyncLocalStorageContextManager {
  private current: Context = ROOT;
  /** The property of a promise that holds its context (one per manager). */
  private readonly tag = Symbol('otel.context');
  /** The contexts that promise jobs interrupted (jobs do not nest; a stack to be safe). */
  private readonly saved: Context[] = [];
  private stopHooks: (() => void) | undefined;

  override active(): Context {
    return this.current;
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.current;
    this.current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  /**
   * Makes `ctx` active in the code that follows, until the token is disposed (the experimental
   * counterpart of `with`; its ALS-based original would enter the unused storage).
   */
  override attach(ctx: Context): { dispose(): void } {
    const previous = this.current;
    this.current = ctx;
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        this.current = previous;
      },
    };
  }

  override enable(): this {
    if (this.stopHooks) return this;
    const { tag } = this;
    const stop = promiseHooks.createHook({
      // A promise made outside any context stays untagged: its jobs run in the root context.
      init: (promise) => {
        const current = this.current;
        if (current !== ROOT) (promise as unknown as Tagged)[tag] = current;
      },
      before: (promise) => {
        this.saved.push(this.current);
        this.current = (promise as unknown as Tagged)[tag] ?? ROOT;
      },
      after: () => {
        this.current = this.saved.pop() ?? ROOT;
      },
    });
    this.stopHooks = () => void stop();
    return this;
  }

  override disable(): this {
    this.stopHooks?.();
    this.stopHooks = undefined;
    this.current = ROOT;
    this.saved.length = 0;
    return this;
  }
}
