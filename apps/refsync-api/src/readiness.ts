import { createHealth, type Health } from '@nhp/shared-health';
import type { Logger } from '@nhp/shared-logger';
import { natsIsConnected, type NatsConnection } from '@nhp/shared-messaging';
import { mongoPing } from '@nhp/shared-persistence';
import type { Connection } from 'mongoose';

export interface RefsyncApiHealthDeps {
  logger: Logger;
  connection: Connection;
  /** The NATS connection once there is one (start-up does not wait for NATS). */
  nats: () => NatsConnection | undefined;
}

/**
 * Readiness depends on MongoDB only: without it no miss can be answered. NATS only brings the
 * sync-completed event sooner, and the periodic version check covers an outage of it, so a NATS
 * outage makes the service degraded (named in /readyz, still 200), never unready: otherwise it
 * would pull every replica out of the load balancer while all of them serve data.
 */
export function createRefsyncApiHealth(deps: RefsyncApiHealthDeps): Health {
  return createHealth({
    logger: deps.logger,
    checks: {
      mongo: () => mongoPing(deps.connection),
      nats: { check: () => natsIsConnected(deps.nats()), critical: false },
    },
  });
}
