export * from './ports';
export * from './report';
export {
  runSync,
  type ChangeIds,
  type SyncDependencies,
  type SyncOptions,
  type SyncResult,
} from './run-sync';
