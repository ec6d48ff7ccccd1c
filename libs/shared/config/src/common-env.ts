import { envBool, envDurationMs, envUrl, logLevelSchema, nodeEnvSchema, type NodeEnv } from './env';

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
  NATS_URL: envUrl({ protocols: ['nats', 'tls', 'ws', 'wss'], default: 'nats://127.0.0.1:4222' }),
  /** Upper bound for graceful shutdown; after it the process exits 1. */
  SHUTDOWN_TIMEOUT_MS: envDurationMs(10_000),
  /**
   * Let mongoose build indexes itself. Unset means "true outside production": in production an
   * index build is a deliberate step (MONGO_SYNC_INDEXES_ON_START or a deploy job). Its default
   * depends on NODE_ENV, which a field schema cannot see, so read it with `resolveMongoAutoIndex`.
   */
  MONGO_AUTO_INDEX: envBool().optional(),
  /** Run the explicit index sync (syncIndexes) once at start. */
  MONGO_SYNC_INDEXES_ON_START: envBool(false),
};

/** MONGO_AUTO_INDEX with its NODE_ENV-dependent default applied. */
export function resolveMongoAutoIndex(config: {
  NODE_ENV: NodeEnv;
  MONGO_AUTO_INDEX?: boolean | undefined;
}): boolean {
  return config.MONGO_AUTO_INDEX ?? config.NODE_ENV !== 'production';
}
