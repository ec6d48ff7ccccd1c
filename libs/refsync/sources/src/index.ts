export {
  createUpstreamSource,
  describeUpstreamUrl,
  parseHeaderLine,
  type UpstreamSourceOptions,
} from './upstream-source';
export { parseUpstream } from './parse-upstream';
export { openFileSnapshot } from './file-snapshot';
export { openHttpSnapshot, type HttpSourceOptions } from './http-snapshot';
export { UpstreamError, type UpstreamErrorCode } from './upstream-error';
