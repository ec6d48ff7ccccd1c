import { STATUS_CODES } from 'node:http';

/**
 * Service-neutral categories used when the thrower gives none. A service's error formatter maps
 * them (or the status) onto its own vocabulary; privacy-api, for instance, has its errorCategory
 * enum, and a category that is already one of those enum values passes through unchanged.
 */
export type DefaultErrorCategory =
  | 'validation'
  | 'authentication'
  | 'authorization'
  | 'not-found'
  | 'method'
  | 'conflict'
  | 'rate-limit'
  | 'client'
  | 'unavailable'
  | 'internal';

export function defaultCategory(status: number): DefaultErrorCategory {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 422:
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
      return 'unavailable';
    default:
      return status < 500 ? 'client' : 'internal';
  }
}

export interface AppErrorOptions {
  /** Stable, machine-readable code, e.g. VALIDATION_FAILED. Safe to show to clients. */
  code: string;
  /** HTTP status, 400-599. */
  status: number;
  message: string;
  /** Default: derived from the status (see `defaultCategory`). */
  category?: string;
  /** Structured detail for the client (e.g. validation issues); shown only when `expose` is true. */
  details?: unknown;
  /** Whether `message` and `details` may reach the client. Default: true for 4xx, false for 5xx. */
  expose?: boolean;
  /** Response headers that belong to this error (Allow for 405, WWW-Authenticate for 401, Retry-After). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type route handlers and use cases throw for an expected failure. The central error
 * handler turns it into the service's error body; anything that is not an AppError becomes a 500.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: string;
  readonly status: number;
  readonly category: string;
  readonly details?: unknown;
  readonly expose: boolean;
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

export type AppErrorExtras = Pick<AppErrorOptions, 'category' | 'expose' | 'headers' | 'cause'>;

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
export const internalError = factory(500);
export const serviceUnavailable = factory(503);
