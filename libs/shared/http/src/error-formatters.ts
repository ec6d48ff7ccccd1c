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
