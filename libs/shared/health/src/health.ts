import type { Logger } from '@nhp/shared-logger';

/** A readiness check: true when the dependency is usable. Throwing or hanging counts as false. */
export type HealthCheck = () => Promise<boolean> | boolean;

export interface Readiness {
  ready: boolean;
  /** Each check's result; empty while shutting down (checks are not run then). */
  checks: Record<string, boolean>;
  shuttingDown: boolean;
}

export interface Health {
  /** Liveness: the process is up and its event loop answers. No dependency is consulted. */
  isLive(): true;
  /** Readiness: every check passes within its time box and no shutdown has begun. */
  readiness(): Promise<Readiness>;
  /** From now on readiness is false, so load balancers stop sending traffic before the server closes. */
  markShuttingDown(): void;
  isShuttingDown(): boolean;
}

export interface CreateHealthOptions {
  checks: Record<string, HealthCheck>;
  /** Time box per check; a slower check is false. Default 1500 ms, below typical probe timeouts. */
  checkTimeoutMs?: number;
  /** When given, a check turning false is logged at warn and its recovery at info (once each). */
  logger?: Logger;
}

async function timeBoxed(check: HealthCheck, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
  });
  try {
    const result = await Promise.race([Promise.resolve().then(check), timeout]);
    return result === true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export function createHealth(options: CreateHealthOptions): Health {
  const timeoutMs = options.checkTimeoutMs ?? 1500;
  const names = Object.keys(options.checks);
  const last = new Map<string, boolean>();
  let shuttingDown = false;
  // Probes from several sources (orchestrator, load balancer, /health and /readyz) can overlap; one
  // evaluation at a time answers them all, so a hanging dependency does not pile up checks.
  let inFlight: Promise<Readiness> | undefined;

  function logTransitions(checks: Record<string, boolean>): void {
    for (const name of names) {
      const now = checks[name] ?? false;
      const before = last.get(name);
      if (before !== now) {
        if (!now) options.logger?.warn({ check: name }, 'readiness check failing');
        else if (before === false)
          options.logger?.info({ check: name }, 'readiness check recovered');
      }
      last.set(name, now);
    }
  }

  async function evaluate(): Promise<Readiness> {
    const results = await Promise.all(
      names.map((name) => timeBoxed(options.checks[name] as HealthCheck, timeoutMs)),
    );
    const checks = Object.fromEntries(names.map((name, i) => [name, results[i] ?? false]));
    logTransitions(checks);
    return { ready: !shuttingDown && results.every(Boolean), checks, shuttingDown };
  }

  return {
    isLive: () => true,
    readiness() {
      if (shuttingDown) return Promise.resolve({ ready: false, checks: {}, shuttingDown: true });
      inFlight ??= evaluate().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
    markShuttingDown() {
      shuttingDown = true;
    },
    isShuttingDown: () => shuttingDown,
  };
}
