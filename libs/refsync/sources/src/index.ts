export {
  createUpstreamSource,
  describeUpstreamUrl,
  parseHeaderLine,
  type UpstreamSourceOptions,
} from './upstream-source';
export { parseUpstream } from './parse-upstream';
export { openFileSnapshot } from './file-snapshot';
export { openHttpSnapshot, type HttpSourceOptions } from './http-snapshot';
export {
  isRetryableUpstreamError,
  isUpstreamError,
  upstreamError,
  UPSTREAM_ERROR_CODES,
  type UpstreamErrorCode,
} from './upstream-error';
