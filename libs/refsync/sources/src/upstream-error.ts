import { AppError, isAppError, type ErrorCategory } from '@nhp/shared-errors';

export type UpstreamErrorCode =
  | 'unsupported_url'
  | 'not_found'
  | 'unreachable'
  | 'timeout'
  | 'http_status'
  | 'malformed'
  | 'truncated';

/** The AppError codes, one per reason an upstream could not be read as a whole. */
export const UPSTREAM_ERROR_CODES: Readonly<Record<UpstreamErrorCode, string>> = {
  unsupported_url: 'UPSTREAM_UNSUPPORTED_URL',
  not_found: 'UPSTREAM_NOT_FOUND',
  unreachable: 'UPSTREAM_UNREACHABLE',
  timeout: 'UPSTREAM_TIMEOUT',
  http_status: 'UPSTREAM_HTTP_STATUS',
  malformed: 'UPSTREAM_MALFORMED',
  truncated: 'UPSTREAM_TRUNCATED',
};

/**
 * Why an upstream could not be read as a whole, as an AppError. `retryable` says whether trying
 * again can help (network trouble, a timeout, a 5xx, a download cut off): such errors have the
 * category `unavailable`, the others (a 4xx, a broken file, a missing file) a category that says
 * what is wrong. Either way it is an operational error, not a bug; the status is a gateway status
 * hint (502/503/504) for an HTTP entry point that reports it.
 */
export function upstreamError(
  code: UpstreamErrorCode,
  message: string,
  options: { retryable?: boolean; cause?: unknown } = {},
): AppError {
  const retryable = options.retryable ?? false;
  return new AppError({
    code: UPSTREAM_ERROR_CODES[code],
    status: code === 'timeout' ? 504 : retryable ? 503 : 502,
    category: retryable ? 'unavailable' : categoryOf(code),
    message,
    operational: true,
    cause: options.cause,
  });
}

function categoryOf(code: UpstreamErrorCode): ErrorCategory {
  switch (code) {
    case 'not_found':
      return 'not-found';
    case 'malformed':
    case 'truncated':
      return 'validation';
    case 'unsupported_url':
      return 'internal';
    default:
      return 'client';
  }
}

const CODES = new Set(Object.values(UPSTREAM_ERROR_CODES));

export function isUpstreamError(err: unknown): err is AppError {
  return isAppError(err) && CODES.has(err.code);
}

/** True for an upstream error that another attempt may cure (see `upstreamError`). */
export function isRetryableUpstreamError(err: unknown): boolean {
  return isUpstreamError(err) && err.category === 'unavailable';
}
