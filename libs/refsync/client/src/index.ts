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
export { RefsyncApiError, RefsyncProtocolError } from './lib/errors';
