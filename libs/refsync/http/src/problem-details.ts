import type { ProblemDetails, ProblemFieldError } from '@nhp/refsync-contracts';
import { statusText, type AppError } from '@nhp/shared-errors';
import type { ErrorFormatter } from '@nhp/shared-http';

/** The media type of RFC 9457 problem details. */
export const PROBLEM_JSON = 'application/problem+json';

/** Shown instead of the message of an error that is not exposed (a 5xx, usually). */
const UNEXPOSED_MESSAGE = 'An unexpected error occurred';

export interface ProblemDetailsOptions {
  /**
   * Base URI for problem types: `type` becomes base + the code in kebab case
   * (`https://example.org/problems/validation-failed`). Without it, `type` is "about:blank", which
   * RFC 9457 defines as "the problem is just the HTTP status", and `title` is the status phrase.
   */
  typeBaseUri?: string;
}

const kebab = (code: string) => code.toLowerCase().replace(/[_\s]+/g, '-');

/** What a client may read: the thrower's message when exposed, otherwise nothing internal. */
function detailOf(err: AppError): string {
  if (err.expose) return err.message;
  return err.status >= 500 ? UNEXPOSED_MESSAGE : statusText(err.status);
}

/**
 * Exposed details that name fields (`{path, message}`, optionally with shared-http's `location`)
 * become the `errors` member; details of any other shape are not sent, since the contract
 * describes `errors` as field errors only.
 */
function fieldErrors(details: unknown): ProblemFieldError[] | undefined {
  if (!Array.isArray(details) || details.length === 0) return undefined;
  const out: ProblemFieldError[] = [];
  for (const entry of details as unknown[]) {
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { path, message, location } = entry as Record<string, unknown>;
    if (typeof path !== 'string' || typeof message !== 'string') return undefined;
    const prefix = typeof location === 'string' ? location : '';
    out.push({ path: prefix && path ? `${prefix}.${path}` : prefix || path, message });
  }
  return out;
}

/** The problem details body of an AppError on a request path (the query string is left out). */
export function toProblemDetails(
  err: AppError,
  path: string,
  options: ProblemDetailsOptions = {},
): ProblemDetails {
  const body: ProblemDetails = {
    type: options.typeBaseUri ? `${options.typeBaseUri}${kebab(err.code)}` : 'about:blank',
    title: statusText(err.status),
    status: err.status,
    detail: detailOf(err),
    instance: path,
    code: err.code,
  };
  const errors = err.expose ? fieldErrors(err.details) : undefined;
  if (errors) body.errors = errors;
  return body;
}

/**
 * The refsync services' error formatter for @nhp/shared-http: RFC 9457 problem details, served as
 * application/problem+json. `instance` is the path only: a query string is the client's data and
 * may be long.
 */
export function createProblemDetailsFormatter(options: ProblemDetailsOptions = {}): ErrorFormatter {
  return (err, req) => ({
    status: err.status,
    contentType: PROBLEM_JSON,
    body: toProblemDetails(err, req.originalUrl.split('?')[0] || '/', options),
  });
}

export const problemDetailsFormatter: ErrorFormatter = createProblemDetailsFormatter();
