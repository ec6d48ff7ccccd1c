export {
  createRefsyncClient,
  type ChangedItem,
  type FetchDatasetOptions,
  type FetchDatasetResult,
  type RefsyncClient,
  type RefsyncClientOptions,
  type Spelling,
} from './lib/client';
export {
  RefsyncMirror,
  type DatasetMirrorState,
  type MirrorChanges,
  type MirrorState,
} from './lib/mirror';
export {
  apiErrorStatus,
  apiProtocolError,
  REFSYNC_API_ERROR_STATUS,
  REFSYNC_API_PROTOCOL,
  type ApiErrorStatusDetails,
  type ApiProtocolDetails,
} from './lib/errors';
