import { STATUS_CODES } from 'node:http';

/**
 * What kind of failure an error is, in words no service owns. Each app's error formatter maps a
 * category (and the code) onto its own vocabulary: refsync-api onto RFC 9457 problem details,
 * privacy-api onto ErrorResponse's errorCategory enum.
 *
 * - validation: the request, as sent, is malformed or fails a schema; the client must change it.
 * - rule: the request is well-formed but a business rule refuses it (e.g. an inactive definition).
 * - authentication: credentials are missing, malformed or badly signed.
 * - credentials-expired: the credentials were valid once and have expired; re-authenticate.
 * - authorization: authenticated, but not allowed to do this.
 * - not-found, method, conflict, rate-limit: as the HTTP statuses of the same names.
 * - client: any other client error.
 * - unavailable: a dependency (database, broker) cannot be reached; retrying later may work.
 * - internal: a bug or an unexpected failure; nothing more is said to the client.
 */
export type ErrorCategory =
  | 'validation'
  | 'rule'
  | 'authentication'
  | 'credentials-expired'
  | 'authorization'
  | 'not-found'
  | 'method'
  | 'conflict'
  | 'rate-limit'
  | 'client'
  | 'unavailable'
  | 'internal';

/** The category a status stands for when the thrower names none. */
export function defaultCategory(status: number): ErrorCategory {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 422:
    case 431:
      return 'validation';
    case 401:
      return 'authentication';
    case 403:
      return 'authorization';
    case 404:
      return 'not-found';
    case 405:
    case 406:
      return 'method';
    case 409:
      return 'conflict';
    case 429:
      return 'rate-limit';
    case 503:
    case 504:
      return 'unavailable';
    default:
      return status < 500 ? 'client' : 'internal';
  }
}

export interface AppErrorOptions {
  /** Stable, machine-readable code, e.g. VALIDATION_FAILED or EPVK-101518. Safe to show to clients. */
  code: string;
  /** The HTTP status an HTTP entry point should answer with, 400-599 (a hint: workers ignore it). */
  status: number;
  message: string;
  /** Default: derived from the status (see `defaultCategory`). */
  category?: ErrorCategory;
  /** Structured detail for the client (e.g. validation issues); shown only when `expose` is true. */
  details?: unknown;
  /** Whether `message` and `details` may reach the client. Default: true for 4xx, false for 5xx. */
  expose?: boolean;
  /**
   * Operational errors are expected conditions (bad input, a database that is down); the others are
   * programmer errors (bugs) worth an alert. Default: every category but `internal` is operational.
   */
  operational?: boolean;
  /** Response headers that belong to this error (Allow for 405, WWW-Authenticate for 401, Retry-After). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type of the project. Use cases, repositories and route handlers throw it for an
 * expected failure; each app's central error handler turns it into the app's error body, and
 * anything that is not an AppError becomes an internal error. It knows no framework, so every
 * layer may import it.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: string;
  readonly status: number;
  readonly category: ErrorCategory;
  readonly details?: unknown;
  readonly expose: boolean;
  readonly operational: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(options: AppErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    if (!Number.isInteger(options.status) || options.status < 400 || options.status > 599) {
      // A programmer error: an AppError that is not an error status would be answered as one.
      throw new RangeError(`AppError status must be an integer 400-599, got ${options.status}`);
    }
    this.code = options.code;
    this.status = options.status;
    this.category = options.category ?? defaultCategory(options.status);
    this.details = options.details;
    this.expose = options.expose ?? options.status < 500;
    this.operational = options.operational ?? this.category !== 'internal';
    this.headers = options.headers ?? {};
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** The reason phrase of a status ("Not Found"), for titles and for messages a client may not see. */
export function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

export type AppErrorExtras = Pick<
  AppErrorOptions,
  'category' | 'expose' | 'operational' | 'headers' | 'cause'
>;

function factory(status: number) {
  return (
    code: string,
    message: string,
    details?: unknown,
    extras: AppErrorExtras = {},
  ): AppError => new AppError({ code, status, message, details, ...extras });
}

export const badRequest = factory(400);
export const unauthorized = factory(401);
export const forbidden = factory(403);
export const notFound = factory(404);
/** Pass the allowed methods as `extras.headers.Allow`; the 404/405 handler does this itself. */
export const methodNotAllowed = factory(405);
export const notAcceptable = factory(406);
export const conflict = factory(409);
export const payloadTooLarge = factory(413);
export const unsupportedMediaType = factory(415);
export const headersTooLarge = factory(431);
export const internalError = factory(500);
export const serviceUnavailable = factory(503);
