import type { IncomingHttpHeaders } from 'node:http';
import { privacyErrors } from '@nhp/privacy-domain';
import type { RequestHandler } from 'express';

/** The interface's debug header (declared Boolean): `true` or `false`, in any letter case. */
export const DEBUG_HEADER = 'x-hn-isdebug';

function headerValue(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[DEBUG_HEADER];
  return Array.isArray(value) ? value.join(',') : value;
}

/** Whether the request asks for debug detail (a valid `true`); an invalid value asks for nothing. */
export function debugRequested(headers: IncomingHttpHeaders): boolean {
  return headerValue(headers)?.trim().toLowerCase() === 'true';
}

/**
 * Refuses a request whose X-hn-isdebug is neither true nor false (400 EPVK-100400), on every
 * operation but /health (mounted before this). Repeated headers count as one invalid value.
 */
export const checkDebugHeader: RequestHandler = (req, _res, next) => {
  const value = headerValue(req.headers);
  if (value !== undefined && !/^\s*(true|false)\s*$/i.test(value)) {
    throw privacyErrors.validation(
      'Invalid request: headers.X-hn-isdebug: expected true or false',
      [{ location: 'headers', path: 'X-hn-isdebug', message: 'expected true or false' }],
    );
  }
  next();
};
