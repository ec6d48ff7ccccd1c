export {
  closeMongo,
  connectMongo,
  DURABLE_WRITE_CONCERN,
  mongoIsConnected,
  mongoOptionsFromConfig,
  mongoPing,
  type ConnectMongoOptions,
  type MongoConfig,
  type WriteConcernOptions,
} from './connection';
export {
  BUILD_INDEXES_COMMAND,
  ensureIndexes,
  missingIndexes,
  MissingIndexesError,
  prepareIndexes,
  type DeclaredIndex,
} from './indexes';
export { modelOf } from './models';
export { pointReads, type PointReads, type PointReadsOptions } from './point-reads';
export { DUPLICATE_KEY, duplicateKeyInfo, type DuplicateKeyInfo } from './duplicate-key';
export {
  DATABASE_ERROR,
  DATABASE_UNAVAILABLE,
  DUPLICATE_KEY_CONFLICT,
  toAppError,
  translated,
} from './driver-errors';
export { perTurn, type PerTurn } from './per-turn';
export { startCommandSpan, type CommandSpanFields } from './command-spans';
