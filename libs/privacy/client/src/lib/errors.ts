import type { ErrorResponse, PrivacyErrorCategory } from '@nhp/privacy-contracts';
import { AppError, type ErrorCategory } from '@nhp/shared-errors';

/** Codes the client uses when privacy-api sent no ErrorResponse of its own. */
export const PRIVACY_CLIENT_CODES = {
  /** privacy-api could not be reached (connection refused, reset, timed out). */
  unreachable: 'PRIVACY_CLIENT_UNREACHABLE',
  /** An answer that breaks the contract (not JSON, wrong shape, an error status without ErrorResponse). */
  protocol: 'PRIVACY_CLIENT_PROTOCOL',
  /** No access token could be had from the issuer (or the token function). */
  token: 'PRIVACY_CLIENT_TOKEN',
} as const;

export interface PrivacyApiErrorOptions {
  /** ErrorResponse.code, or one of PRIVACY_CLIENT_CODES. */
  code: string;
  /** ErrorResponse.errorCategory (EndpointIsDown for an unreachable service). */
  errorCategory: PrivacyErrorCategory;
  message: string;
  /** The HTTP status privacy-api answered with; undefined when it did not answer. */
  httpStatus: number | undefined;
  /** privacy-api's X-Request-Id, to quote when asking its operators. */
  requestId?: string | undefined;
  operation: string;
  cause?: unknown;
}

const NEUTRAL: Record<PrivacyErrorCategory, ErrorCategory> = {
  Unknown: 'internal',
  SessionExpired: 'credentials-expired',
  ClientValidationError: 'validation',
  ServerValidationError: 'rule',
  DataMappingError: 'internal',
  EndpointIsDown: 'unavailable',
  ConfigError: 'internal',
  EndpointUnknownError: 'internal',
  Critical: 'internal',
};

/**
 * The one error every operation rejects with: privacy-api's ErrorResponse (`code`,
 * `errorCategory`, `message`) and the status, or a client-side code when there was no answer to
 * read. An AppError (status hint 502: for the caller this is a failed dependency), so a service
 * built on this repository's error handler reports it as such.
 */
export class PrivacyApiError extends AppError {
  readonly errorCategory: PrivacyErrorCategory;
  readonly httpStatus: number | undefined;
  readonly requestId: string | undefined;
  readonly operation: string;

  constructor(options: PrivacyApiErrorOptions) {
    let category: ErrorCategory = NEUTRAL[options.errorCategory];
    if (options.httpStatus === 401 && options.code === 'EPVK-100401') {
      category =
        options.errorCategory === 'SessionExpired' ? 'credentials-expired' : 'authentication';
    } else if (options.code === 'EPVK-100403') {
      category = 'authorization';
    }
    super({
      code: options.code,
      status: 502,
      category,
      message: `${options.operation}: ${options.message}`,
      expose: false,
      cause: options.cause,
    });
    this.errorCategory = options.errorCategory;
    this.httpStatus = options.httpStatus;
    this.requestId = options.requestId;
    this.operation = options.operation;
  }

  /** Whether trying again may work: privacy-api unreachable or answering 5xx. Never a 4xx. */
  get transient(): boolean {
    return (
      this.code === PRIVACY_CLIENT_CODES.unreachable ||
      (this.httpStatus !== undefined && this.httpStatus >= 500)
    );
  }

  static fromResponse(
    operation: string,
    status: number,
    body: ErrorResponse | undefined,
    requestId: string | undefined,
  ): PrivacyApiError {
    if (body) {
      return new PrivacyApiError({
        code: body.code ?? PRIVACY_CLIENT_CODES.protocol,
        errorCategory: body.errorCategory,
        message: body.message ?? `answered ${status}`,
        httpStatus: status,
        requestId,
        operation,
      });
    }
    return new PrivacyApiError({
      code: PRIVACY_CLIENT_CODES.protocol,
      errorCategory: status >= 500 ? 'EndpointIsDown' : 'Unknown',
      message: `answered ${status} without an ErrorResponse`,
      httpStatus: status,
      requestId,
      operation,
    });
  }
}
