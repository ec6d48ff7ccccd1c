import type { IncomingHttpHeaders } from 'node:http';
import { AppError, statusText } from '@nhp/shared-errors';

export interface FormattedError {
  status: number;
  contentType: string;
  body: unknown;
}

/**
 * The request an error answers, without a framework: an Express request is one, and so is what
 * `listen` builds for an error Node's HTTP parser raises before any request exists (there
 * `originalUrl` is the request line's path when it could be read, else "/", and `headers` is empty).
 */
export interface ErrorContext {
  readonly originalUrl: string;
  readonly headers: IncomingHttpHeaders;
  /** The request id (also sent as X-Request-Id). */
  readonly id?: unknown;
}

/** Turns an AppError into the service's error response. Chosen once per app, in createHttpApp. */
export type ErrorFormatter = (err: AppError, req: ErrorContext) => FormattedError;

const UNEXPOSED_MESSAGE = 'An unexpected error occurred';

/** What a client may read: the thrower's message when exposed, otherwise nothing internal. */
export function clientMessage(err: AppError): string {
  return err.expose ? err.message : err.status >= 500 ? UNEXPOSED_MESSAGE : statusText(err.status);
}

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
