export type UpstreamErrorCode =
  | 'unsupported_url'
  | 'not_found'
  | 'unreachable'
  | 'timeout'
  | 'http_status'
  | 'malformed'
  | 'truncated';

/**
 * Why an upstream could not be read as a whole. `retryable` tells the HTTP reader whether trying
 * again can help (network trouble and 5xx can; 4xx and a broken file cannot).
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';

  constructor(
    readonly code: UpstreamErrorCode,
    message: string,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
