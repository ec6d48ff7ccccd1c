import type { Logger } from '@nhp/shared-logger';

/** A readiness check: true when the dependency is usable. Throwing or hanging counts as false. */
export type HealthCheck = () => Promise<boolean> | boolean;

/**
 * A check with its weight. A critical check (the default) failing makes the service not ready;
 * a non-critical one failing only makes it degraded: the service still does its job without that
 * dependency (e.g. a broker that only speeds something up), so it must stay in the load balancer.
 */
export interface HealthCheckSpec {
  check: HealthCheck;
  /** Default true. */
  critical?: boolean;
}

export interface Readiness {
  /** Every critical check passes and no shutdown has begun. */
  ready: boolean;
  /** Names of the non-critical checks that fail (empty when none): ready but degraded. */
  degraded: string[];
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
  /** By name: a function (critical) or `{ check, critical: false }` for a degraded-only check. */
  checks: Record<string, HealthCheck | HealthCheckSpec>;
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
  const specs = names.map((name): Required<HealthCheckSpec> => {
    const given = options.checks[name] as HealthCheck | HealthCheckSpec;
    return typeof given === 'function'
      ? { check: given, critical: true }
      : { check: given.check, critical: given.critical ?? true };
  });
  const last = new Map<string, boolean>();
  let shuttingDown = false;
  // Probes from several sources (orchestrator, load balancer, /health and /readyz) can overlap; one
  // evaluation at a time answers them all, so a hanging dependency does not pile up checks.
  let inFlight: Promise<Readiness> | undefined;

  function logTransitions(checks: Record<string, boolean>): void {
    for (const [i, name] of names.entries()) {
      const critical = specs[i]?.critical ?? true;
      const now = checks[name] ?? false;
      const before = last.get(name);
      if (before !== now) {
        if (!now) options.logger?.warn({ check: name, critical }, 'readiness check failing');
        else if (before === false)
          options.logger?.info({ check: name }, 'readiness check recovered');
      }
      last.set(name, now);
    }
  }

  async function evaluate(): Promise<Readiness> {
    const results = await Promise.all(specs.map((spec) => timeBoxed(spec.check, timeoutMs)));
    const checks = Object.fromEntries(names.map((name, i) => [name, results[i] ?? false]));
    logTransitions(checks);
    const criticalOk = specs.every((spec, i) => !spec.critical || results[i] === true);
    const degraded = names.filter((_name, i) => !specs[i]?.critical && results[i] !== true);
    return { ready: !shuttingDown && criticalOk, degraded, checks, shuttingDown };
  }

  return {
    isLive: () => true,
    readiness() {
      if (shuttingDown) {
        return Promise.resolve({ ready: false, degraded: [], checks: {}, shuttingDown: true });
      }
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
