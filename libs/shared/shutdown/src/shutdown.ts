import type { Logger } from '@nhp/shared-logger';
import { handleProcessErrors } from './process-errors';

export interface ShutdownStep {
  /** For the logs: "mark not ready", "close HTTP server", "drain NATS", "close MongoDB". */
  name: string;
  run: () => Promise<void> | void;
}

export interface CreateShutdownOptions {
  logger: Logger;
  /** Upper bound for all steps together; when it passes first, the process exits 1. */
  timeoutMs: number;
  /** Run in order, each after the previous one settled. */
  steps: ShutdownStep[];
  /** Default process.exit; tests inject their own. */
  exit?: (code: number) => void;
}

export interface InstallOptions {
  /**
   * Also apply the process error policy (handleProcessErrors): an uncaught exception or an
   * unhandled rejection of anything but an operational AppError is logged at fatal and ends the
   * process through this shutdown, non-zero.
   */
  processErrors?: boolean;
}

export interface Shutdown {
  /** Runs the steps once; later calls return the same promise. Resolves after `exit` was called. */
  run(signal?: string): Promise<void>;
  /**
   * The same graceful stop for a failure (`reason`, e.g. "uncaughtException"): the steps run
   * within the timeout, and the exit code is 1 even when they all finish. Called while a shutdown
   * is already running, it joins it and makes its exit code 1.
   */
  fail(reason: string): Promise<void>;
  /** Handles SIGTERM and SIGINT by running the shutdown (and process errors, if asked). Idempotent. */
  install(options?: InstallOptions): void;
  /** Removes the handlers again (tests; or an app that hands signals to someone else). */
  uninstall(): void;
}

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/**
 * Graceful shutdown: run each step in order (a failing step is logged and the next one still runs,
 * since closing MongoDB is still worth doing when draining NATS failed), then exit 0. If the steps
 * have not finished within `timeoutMs`, exit 1: a process that cannot stop must not hang a deploy.
 */
export function createShutdown(options: CreateShutdownOptions): Shutdown {
  const { logger, timeoutMs, steps } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let running: Promise<void> | undefined;
  /** The exit code when the steps finish in time: 0, or 1 once a failure asked for the stop. */
  let completedExitCode = 0;

  async function runSteps(state: { current?: string }): Promise<number> {
    let failed = 0;
    for (const step of steps) {
      state.current = step.name;
      try {
        await step.run();
        logger.info({ step: step.name }, 'shutdown step done');
      } catch (err) {
        failed += 1;
        logger.error({ err, step: step.name }, 'shutdown step failed');
      }
    }
    state.current = undefined;
    return failed;
  }

  async function shutdown(signal: string | undefined): Promise<void> {
    logger.info({ signal, timeoutMs }, 'shutdown started');
    const state: { current?: string } = {};
    let timer: NodeJS.Timeout | undefined;
    // Deliberately not unref'd: when a step hangs on a promise that nothing else keeps pending
    // (no socket, no timer), an unref'd timer would let the event loop drain and the process end
    // with code 0 as if the shutdown had succeeded. It is cleared as soon as the steps finish.
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });

    const outcome = await Promise.race([runSteps(state), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      logger.error({ timeoutMs, step: state.current }, 'shutdown timed out; exiting with code 1');
      exit(1);
      return;
    }
    // Steps that failed were logged above; the process still stopped in time, which is what the
    // exit code reports (a dependency that is already gone must not make Ctrl-C look like a crash),
    // unless a failure (a crash) is why it stopped.
    logger.info({ failedSteps: outcome, exitCode: completedExitCode }, 'shutdown complete');
    exit(completedExitCode);
  }

  function run(signal?: string): Promise<void> {
    running ??= shutdown(signal);
    return running;
  }

  function fail(reason: string): Promise<void> {
    completedExitCode = 1;
    return run(reason);
  }

  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      logger.warn({ signal }, 'shutdown already in progress; signal ignored');
      return;
    }
    void run(signal);
  };

  let installed = false;
  let removeProcessErrors: (() => void) | undefined;
  return {
    run,
    fail,
    install(installOptions = {}) {
      if (installOptions.processErrors && !removeProcessErrors) {
        removeProcessErrors = handleProcessErrors({ logger, shutdown: { fail } });
      }
      if (installed) return;
      installed = true;
      for (const signal of SIGNALS) process.on(signal, onSignal);
    },
    uninstall() {
      removeProcessErrors?.();
      removeProcessErrors = undefined;
      if (!installed) return;
      installed = false;
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}
