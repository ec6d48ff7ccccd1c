import type { ErrorRequestHandler, Response } from 'express';
import { AppError } from '@nhp/shared-errors';
import { toClientError } from './client-errors';
import type { ErrorFormatter, FormattedError } from './error-formatters';
import { noteErrorCode } from './request-log';

export function errorHandler(formatter: ErrorFormatter): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    // Too late for an error body: Express's default handler closes the connection.
    if (res.headersSent) {
      // A response already ended (a 408 for a body that never arrived) leaves the body reader
      // failing as "aborted": the request's remains, not a fault.
      if (res.writableEnded) req.log.debug({ err }, 'error after the response ended');
      else req.log.error({ err }, 'error after the response started');
      next(err);
      return;
    }
    // A programmer error inside a request is answered (500) and logged with its stack, and the
    // process goes on: Express caught it, so it unwound only this request's handlers (see
    // @nhp/shared-shutdown's README for the errors that escape every handler).
    let appError = toClientError(err);
    if (!appError) {
      req.log.error({ err }, 'unexpected error');
      appError = new AppError({
        code: 'INTERNAL_ERROR',
        status: 500,
        message: 'Unexpected error',
        cause: err,
      });
    } else if (appError.status >= 500 || !appError.operational) {
      // A non-operational AppError is a bug its thrower named, whatever status it asks for.
      req.log.error({ err: appError, operational: appError.operational }, 'request failed');
    }
    noteErrorCode(res, appError.code);
    sendError(res, formatter(appError, req), appError.headers);
  };
}

function sendError(
  res: Response,
  formatted: FormattedError,
  headers: Readonly<Record<string, string>>,
): void {
  res.set(headers);
  res.status(formatted.status).type(formatted.contentType).send(JSON.stringify(formatted.body));
}
