export {
  ensureRefsyncIndexes,
  refsyncModels,
  ITEMS_COLLECTION,
  STATE_COLLECTION,
  STATE_ID,
  type ItemVersionDoc,
  type OutboxEventDoc,
  type RefsyncModels,
  type StateDoc,
} from './lib/models';
export {
  createRefsyncReadRepository,
  knownDown,
  type ListItemsOptions,
  type RefsyncReadRepository,
  type RefsyncState,
  type ScannedItem,
  type StoredItem,
} from './lib/read-repository';
export {
  createRefsyncWriteRepository,
  STAGE_BATCH_SIZE,
  type CommitInput,
  type CommittedItem,
  type CommittedItemRef,
  type OutboxEvent,
  type PruneOptions,
  type RecoverResult,
  type RefsyncWriteRepository,
  type StagedItemChange,
  type StageResult,
} from './lib/write-repository';
export {
  databaseUnavailable,
  REFSYNC_STAGING_REJECTED,
  REFSYNC_VERSION_CONFLICT,
  refsyncStorageError,
  stagingRejected,
  versionConflict,
  type StagingRejectedDetails,
  type VersionConflictDetails,
} from './lib/errors';
export { syncCompletedEvent } from './lib/events';
export { DATABASE_ERROR, DATABASE_UNAVAILABLE } from '@nhp/shared-persistence';
export * from './importer';
export { registerRefsyncModels } from './register-models';
