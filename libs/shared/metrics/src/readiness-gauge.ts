import { Gauge } from 'prom-client';
import type { AppMetrics } from './app-metrics';

/**
 * `<app>_ready`: 1 while the app is ready (every critical readiness check passes and no shutdown
 * has begun: what `/readyz` answers 200 for), else 0, evaluated when scraped. An alert on it sees
 * an instance the load balancer has taken out while Prometheus still reaches it (`up` is 1).
 * `ready` is the app's own readiness (@nhp/shared-health's `readiness()`), which time-boxes its
 * checks and shares one evaluation among overlapping callers, so a scrape stays bounded.
 */
export function readinessGauge(metrics: AppMetrics, ready: () => Promise<boolean>): void {
  new Gauge({
    name: metrics.name('ready'),
    help: '1 while the app is ready (every critical readiness check passes, as /readyz answers 200), else 0; evaluated when scraped.',
    registers: [metrics.registry],
    async collect() {
      let value = false;
      try {
        value = await ready();
      } catch {
        // A readiness that cannot be evaluated is "not ready"; it never fails the scrape.
      }
      this.set(value ? 1 : 0);
    },
  });
}
