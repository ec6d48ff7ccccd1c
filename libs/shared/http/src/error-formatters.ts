import type { Request } from 'express';
import { AppError, statusText } from './app-error';

export interface FormattedError {
  status: number;
  contentType: string;
  body: unknown;
}

/** Turns an AppError into the service's error response. Chosen once per app, in createHttpApp. */
export type ErrorFormatter = (err: AppError, req: Request) => FormattedError;

const UNEXPOSED_MESSAGE = 'An unexpected error occurred';

/** What a client may read: the thrower's message when exposed, otherwise nothing internal. */
function clientMessage(err: AppError): string {
  return err.expose ? err.message : err.status >= 500 ? UNEXPOSED_MESSAGE : statusText(err.status);
}

// ---------------------------------------------------------------------------------------------
// privacy-api: ErrorResponse { code, message, errorCategory } (privacy-service.md)

export const PRIVACY_ERROR_CATEGORIES = [
  'Unknown',
  'SessionExpired',
  'ClientValidationError',
  'ServerValidationError',
  'DataMappingError',
  'EndpointIsDown',
  'ConfigError',
  'EndpointUnknownError',
  'Critical',
] as const;
export type PrivacyErrorCategory = (typeof PRIVACY_ERROR_CATEGORIES)[number];

export interface PrivacyErrorResponse {
  code: string | null;
  message: string | null;
  errorCategory: PrivacyErrorCategory;
}

function isPrivacyCategory(value: string): value is PrivacyErrorCategory {
  return (PRIVACY_ERROR_CATEGORIES as readonly string[]).includes(value);
}

/**
 * The errorCategory for an error. An AppError whose category is already an enum value keeps it
 * (a use case knows best, e.g. DataMappingError). Otherwise the status decides:
 * - 401 → SessionExpired: the client's credentials are missing, invalid or expired, and the
 *   category clients act on by re-authenticating is SessionExpired.
 * - any other 4xx (400, 403, 404, 405, 406, 409, 413, 415) → ClientValidationError: the request,
 *   as sent, cannot be served; the client must change it.
 * - 503 and 504 → EndpointIsDown: a dependency (MongoDB, NATS) is unreachable; retry later.
 * - 502 → EndpointUnknownError: a dependency answered with something we could not use.
 * - any other 5xx → Unknown: an unexpected failure; nothing more is said to the client.
 * Critical, ServerValidationError and ConfigError are never inferred: code raises them explicitly.
 */
export function privacyErrorCategory(err: AppError): PrivacyErrorCategory {
  if (isPrivacyCategory(err.category)) return err.category;
  if (err.status === 401) return 'SessionExpired';
  if (err.status < 500) return 'ClientValidationError';
  if (err.status === 503 || err.status === 504) return 'EndpointIsDown';
  if (err.status === 502) return 'EndpointUnknownError';
  return 'Unknown';
}

/**
 * privacy-api's error body. ErrorResponse has exactly three fields, so validation details are not
 * added as a fourth: the validation helper already folds them into the message.
 */
export const privacyErrorFormatter: ErrorFormatter = (err) => {
  const body: PrivacyErrorResponse = {
    code: err.code,
    message: clientMessage(err),
    errorCategory: privacyErrorCategory(err),
  };
  return { status: err.status, contentType: 'application/json', body };
};

// ---------------------------------------------------------------------------------------------
// refsync-api: RFC 9457 problem details

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  /** Extension: the AppError code, stable for clients to branch on. */
  code: string;
  /** Extension: structured details (e.g. validation issues), when the error exposes them. */
  errors?: unknown;
}

export interface ProblemDetailsOptions {
  /**
   * Base URI for problem types: `type` becomes base + the code in kebab case
   * (`https://example.org/problems/validation-failed`). Without it, `type` is "about:blank", which
   * RFC 9457 defines as "the problem is just the HTTP status", and `title` is the status phrase.
   */
  typeBaseUri?: string;
}

const kebab = (code: string) => code.toLowerCase().replace(/[_\s]+/g, '-');

export function createProblemDetailsFormatter(options: ProblemDetailsOptions = {}): ErrorFormatter {
  return (err, req) => {
    const body: ProblemDetails = {
      type: options.typeBaseUri ? `${options.typeBaseUri}${kebab(err.code)}` : 'about:blank',
      title: statusText(err.status),
      status: err.status,
      detail: clientMessage(err),
      // The path only: a query string is the client's data and may be long.
      instance: req.originalUrl.split('?')[0] ?? '/',
      code: err.code,
    };
    if (err.expose && err.details !== undefined) body.errors = err.details;
    return { status: err.status, contentType: 'application/problem+json', body };
  };
}

export const problemDetailsFormatter: ErrorFormatter = createProblemDetailsFormatter();
