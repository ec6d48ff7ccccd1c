export { ConfigError, loadConfigOrExit, parseEnv } from './parse-env';
export {
  envBool,
  envDurationMs,
  envInt,
  envPort,
  envUrl,
  logLevelSchema,
  LOG_LEVELS,
  nodeEnvSchema,
  NODE_ENVS,
  parseDurationMs,
  type EnvIntOptions,
  type EnvUrlOptions,
  type LogLevel,
  type NodeEnv,
} from './env';
export { commonEnvShape, HTTP_SERVER_DEFAULTS, resolveMongoAutoIndex } from './common-env';
