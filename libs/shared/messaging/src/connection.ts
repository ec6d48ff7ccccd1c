import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';

export interface ConnectNatsOptions {
  /** One URL or a comma-separated list, as in NATS_URL. */
  servers: string | string[];
  /** Connection name shown in the server's monitoring (e.g. the app name). */
  name: string;
  logger: Logger;
  /** How long to wait between reconnect attempts. */
  reconnectTimeWaitMs?: number;
}

/**
 * nats.js reports the connection state only as a stream of status events, so we keep the last
 * known state per connection for readiness probes.
 */
const connected = new WeakMap<NatsConnection, boolean>();

/** Who wants to know when a connection is back (see onNatsReconnect). */
const reconnectListeners = new WeakMap<NatsConnection, Set<() => void>>();

/**
 * Calls `listener` each time `nc` reconnects after a disconnect. Core NATS delivers nothing that
 * was published while a subscriber was away, so whoever keeps state in step with a subject (a
 * cached version, cached entries) must catch up here instead of waiting for the next message.
 * Only for connections made by connectNats. Returns a function that removes the listener.
 */
export function onNatsReconnect(nc: NatsConnection, listener: () => void): () => void {
  let listeners = reconnectListeners.get(nc);
  if (!listeners) {
    listeners = new Set();
    reconnectListeners.set(nc, listeners);
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function toServerList(servers: string | string[]): string[] {
  const list = Array.isArray(servers) ? servers : servers.split(',');
  return list.map((s) => s.trim()).filter((s) => s.length > 0);
}

/**
 * Connects with endless reconnects: a NATS outage must degrade readiness, never end the process.
 * `waitOnFirstConnect` lets a service start before NATS is up (compose starts them together).
 */
export async function connectNats(options: ConnectNatsOptions): Promise<NatsConnection> {
  const { logger } = options;
  const servers = toServerList(options.servers);
  const nc = await connect({
    servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: options.reconnectTimeWaitMs ?? 1000,
    waitOnFirstConnect: true,
  });
  connected.set(nc, true);
  logger.info({ server: nc.getServer() }, 'nats connected');
  void watchStatus(nc, logger);
  return nc;
}

async function watchStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  for await (const status of nc.status()) {
    switch (status.type) {
      case 'disconnect':
        connected.set(nc, false);
        logger.warn({ server: status.server }, 'nats disconnected');
        break;
      case 'reconnect':
        connected.set(nc, true);
        logger.info({ server: status.server }, 'nats reconnected');
        for (const listener of reconnectListeners.get(nc) ?? []) {
          try {
            listener();
          } catch (err) {
            logger.error({ err }, 'nats reconnect listener failed');
          }
        }
        break;
      case 'reconnecting':
        logger.debug('nats reconnecting');
        break;
      case 'error':
        logger.error({ err: status.error }, 'nats error');
        break;
      case 'close':
        connected.set(nc, false);
        break;
      default:
        logger.debug({ status: status.type }, 'nats status');
    }
  }
}

/**
 * One attempt to connect, for a short-lived command that can do without NATS (it only announces
 * something): undefined when no server answers within `timeoutMs`, never an endless wait.
 */
export async function tryConnectNats(options: {
  servers: string | string[];
  name: string;
  timeoutMs?: number;
}): Promise<NatsConnection | undefined> {
  try {
    return await connect({
      servers: toServerList(options.servers),
      name: options.name,
      timeout: options.timeoutMs ?? 2000,
      reconnect: false,
    });
  } catch {
    return undefined;
  }
}

/** Readiness check: true while the client holds a live connection to a server. */
export function natsIsConnected(nc: NatsConnection | undefined): boolean {
  if (!nc || nc.isClosed()) return false;
  return connected.get(nc) ?? false;
}

/** Drains subscriptions and pending publishes, then closes. Safe to call on a closed connection. */
export async function drainNats(nc: NatsConnection | undefined): Promise<void> {
  if (!nc || nc.isClosed()) return;
  try {
    await nc.drain();
  } catch {
    // A connection that is reconnecting cannot drain; close it instead so shutdown completes.
    await nc.close();
  }
}
