export {
  createDatasetReads,
  MAX_VERSION_ATTEMPTS,
  type DatasetReadPorts,
  type DatasetReads,
  type MissOutcome,
} from './dataset-reads';
export { DATASET_ROUTES, type DatasetRoute, type Spelling } from './datasets';
export type {
  DatasetReader,
  ListedItem,
  ReadLogger,
  ScannedListedItem,
  VersionConflicts,
} from './ports';
export type {
  DatasetRequest,
  Outcome,
  Resolution,
  ResolveDatasetRequest,
} from './requests/dataset-requests';
export { pathOf } from './requests/query';
export {
  CONTENT_ENCODINGS,
  type CachedResponse,
  type ContentEncoding,
  type ResponseStore,
  type Selection,
} from './responses/response-store';
export type { RefreshReason, VersionTracker } from './versions/version-tracker';
