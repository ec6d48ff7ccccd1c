import { z } from 'zod';
import {
  envBool,
  envDurationMs,
  envInt,
  envUrl,
  envUrlList,
  envWriteConcern,
  logLevelSchema,
  nodeEnvSchema,
} from './env';

/**
 * Production defaults of the HTTP server limits (`listen` in @nhp/shared-http applies them when a
 * caller passes none, so tests and tools get the same server the apps run).
 *
 * - Headers within 10 s and the whole request (headers and body) within 30 s: a client that
 *   trickles its headers or body is answered 408 instead of holding a connection for Node's
 *   300 s. Responses are not limited: a long list may take as long as it takes to send.
 * - Idle keep-alive connections are kept for 65 s, longer than the 60 s idle timeout of common
 *   load balancers, so the balancer closes them first and never reuses one the app just closed
 *   (which shows as sporadic 502s).
 * - At most 10 000 open connections per process; more are dropped by Node at accept time, before
 *   they cost a request.
 */
export const HTTP_SERVER_DEFAULTS = {
  HTTP_HEADERS_TIMEOUT_MS: 10_000,
  HTTP_REQUEST_TIMEOUT_MS: 30_000,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 65_000,
  HTTP_MAX_CONNECTIONS: 10_000,
} as const;

const trustProxySchema = z.string().transform((raw, ctx): boolean | number | string => {
  const value = raw.trim();
  if (/^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  const parts = value.split(',').map((p) => p.trim());
  if (
    value !== '' &&
    parts.every((p) => /^[0-9A-Fa-f:./]+$|^(loopback|linklocal|uniquelocal)$/.test(p))
  ) {
    return parts.join(',');
  }
  ctx.addIssue({
    code: 'custom',
    message:
      'expected true, false, a hop count, or addresses/subnets/loopback|linklocal|uniquelocal',
  });
  return z.NEVER;
});

/**
 * Variables every app reads. Apps spread this into their own schema:
 * `z.object({ ...commonEnvShape, PRIVACY_API_PORT: envPort(3001) })`.
 */
export const commonEnvShape = {
  NODE_ENV: nodeEnvSchema,
  LOG_LEVEL: logLevelSchema.default('info'),
  /** Human-readable logs (pino-pretty, a dev dependency). Production keeps JSON. */
  LOG_PRETTY: envBool(false),
  MONGO_URL: envUrl({
    protocols: ['mongodb', 'mongodb+srv'],
    default: 'mongodb://127.0.0.1:27017/nhp',
  }),
  /** One server or a comma-separated list (a cluster's seed servers). */
  NATS_URL: envUrlList({
    protocols: ['nats', 'tls', 'ws', 'wss'],
    default: 'nats://127.0.0.1:4222',
  }),
  /**
   * Replicas of every JetStream stream and key-value bucket the apps create (1 for a single NATS
   * server, 3 for a three-node cluster). A change is applied to existing streams at start.
   */
  NATS_STREAM_REPLICAS: envInt({ min: 1, max: 5, default: 1 }),
  /**
   * The write concern of every write of record (shared-persistence applies it to the connection):
   * acknowledged means durable, so the default is a majority of the replica set with the journal.
   */
  MONGO_WRITE_CONCERN: envWriteConcern(),
  /**
   * How long an operation waits for a usable MongoDB server before it fails (503). Short, so that
   * during an outage requests answer at once instead of piling up; start-up keeps retrying longer.
   */
  MONGO_SERVER_SELECTION_TIMEOUT_MS: envDurationMs(1000).pipe(z.number().min(100)),
  /** Upper bound for graceful shutdown; after it the process exits 1. */
  SHUTDOWN_TIMEOUT_MS: envDurationMs(10_000),
  /**
   * Before serving, each app creates every index it declares that the database lacks (and drops
   * none). An operator who builds indexes separately (`npm run db-indexes`) sets false: the app
   * then checks at start and refuses to start while one is missing, naming it.
   */
  MONGO_ENSURE_INDEXES: envBool(true),
  /** Time to receive a request's headers; must not exceed HTTP_REQUEST_TIMEOUT_MS. */
  HTTP_HEADERS_TIMEOUT_MS: envDurationMs(HTTP_SERVER_DEFAULTS.HTTP_HEADERS_TIMEOUT_MS),
  /** Time to receive a whole request, body included; a slower one is answered 408. */
  HTTP_REQUEST_TIMEOUT_MS: envDurationMs(HTTP_SERVER_DEFAULTS.HTTP_REQUEST_TIMEOUT_MS),
  /** How long an idle keep-alive connection is kept after a response. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: envDurationMs(HTTP_SERVER_DEFAULTS.HTTP_KEEP_ALIVE_TIMEOUT_MS),
  /** Open connections per process; Node drops further ones as they arrive. */
  HTTP_MAX_CONNECTIONS: envInt({ min: 1, default: HTTP_SERVER_DEFAULTS.HTTP_MAX_CONNECTIONS }),
  /**
   * Express "trust proxy": which hops' X-Forwarded-Proto/-Host/-For count. `false` (default: the
   * peer is the client), `true` (trust every hop), a hop count, or a comma-separated list of
   * addresses, subnets or the names loopback, linklocal and uniquelocal. Behind a gateway that
   * terminates TLS it must name the gateway, or URLs the client signed (DPoP's htu) look like http.
   */
  HTTP_TRUST_PROXY: trustProxySchema.default(false),
};
