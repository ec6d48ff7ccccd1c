import type { ProblemDetails } from '@nhp/refsync-contracts';
import { AppError } from '@nhp/shared-errors';

/**
 * Codes of the AppErrors the client rejects with; branch with
 * `err instanceof AppError && err.code === REFSYNC_API_ERROR_STATUS`.
 */
export const REFSYNC_API_ERROR_STATUS = 'REFSYNC_API_ERROR_STATUS';
export const REFSYNC_API_PROTOCOL = 'REFSYNC_API_PROTOCOL';

/** `details` of a REFSYNC_API_ERROR_STATUS. */
export interface ApiErrorStatusDetails {
  /** The status refsync-api answered with. */
  status: number;
  /** Its RFC 9457 body, when it sent one. */
  problem: ProblemDetails | undefined;
  url: string;
}

/** `details` of a REFSYNC_API_PROTOCOL. */
export interface ApiProtocolDetails {
  url: string;
}

/**
 * The service answered with an error status. For the caller this is a failed dependency (502 as
 * a status hint); a 5xx or 429 is `unavailable` (retrying later may work), any other status means
 * this side's request or key is wrong (`internal`).
 */
export function apiErrorStatus(
  status: number,
  problem: ProblemDetails | undefined,
  url: string,
): AppError {
  const details: ApiErrorStatusDetails = { status, problem, url };
  return new AppError({
    code: REFSYNC_API_ERROR_STATUS,
    status: 502,
    category: status >= 500 || status === 429 ? 'unavailable' : 'internal',
    message: `refsync-api answered ${status} for ${url}${problem ? `: ${problem.detail || problem.title}` : ''}`,
    details,
  });
}

/** The service answered 200 with a body that does not match the contract. */
export function apiProtocolError(message: string, url: string): AppError {
  const details: ApiProtocolDetails = { url };
  return new AppError({
    code: REFSYNC_API_PROTOCOL,
    status: 502,
    category: 'internal',
    message: `${message} (${url})`,
    details,
  });
}
