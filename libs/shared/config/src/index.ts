export { ConfigError, loadConfigOrExit, parseEnv } from './parse-env';
export {
  envBool,
  envDurationMs,
  envInt,
  envPort,
  envUrl,
  envUrlList,
  envWriteConcern,
  logLevelSchema,
  LOG_LEVELS,
  nodeEnvSchema,
  NODE_ENVS,
  parseDurationMs,
  parseWriteConcern,
  type MongoWriteConcern,
  type EnvIntOptions,
  type EnvUrlOptions,
  type LogLevel,
  type NodeEnv,
} from './env';
export { commonEnvShape, HTTP_SERVER_DEFAULTS } from './common-env';
export {
  DEV_STACK_FILE,
  devDataDir,
  devStackFilePath,
  devStackUrl,
  readDevStack,
  removeDevStack,
  writeDevStack,
  type DevStack,
  type ResolvedUrl,
} from './dev-stack-file';
