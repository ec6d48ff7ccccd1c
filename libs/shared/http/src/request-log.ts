import type { ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler } from 'express';
import { pino, type Level } from 'pino';
// Only for its typings of req.log and req.id (the request logger below is our own).
import type {} from 'pino-http';
import { redactIdentityNumbers, redactQuery, type Logger } from '@nhp/shared-logger';

/** Paths whose request lines are debug by default (probes and scrapes hit them every few seconds). */
export const DEFAULT_QUIET_PATHS = ['/health', '/livez', '/readyz', '/metrics'];

export const LOGGED_REQUEST_HEADERS: readonly string[] = [
  'host',
  'user-agent',
  'content-type',
  'content-length',
  'content-encoding',
  'accept',
  'accept-encoding',
  'if-none-match',
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-proto',
  'traceparent',
];
/** Longest logged value of a header, query parameter or path; longer ones are cut and marked. */
export const MAX_LOGGED_VALUE_LENGTH = 256;

function capped(value: string): string {
  return value.length > MAX_LOGGED_VALUE_LENGTH
    ? `${value.slice(0, MAX_LOGGED_VALUE_LENGTH)}…[${value.length} chars]`
    : value;
}

function loggedHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const logged: Record<string, string> = {};
  if (!headers) return logged;
  for (const name of LOGGED_REQUEST_HEADERS) {
    const value = headers[name];
    if (value !== undefined)
      logged[name] = capped(Array.isArray(value) ? value.join(', ') : String(value));
  }
  return logged;
}

/** The query as logged: redacted by rule (credential-named parameters, identity numbers), capped. */
function loggedQuery(query: unknown): unknown {
  if (typeof query !== 'object' || query === null) return query;
  const logged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(redactQuery(query as Record<string, unknown>))) {
    logged[capped(key)] = typeof value === 'string' ? capped(value) : value;
  }
  return logged;
}

/** Route parameters as logged: a path segment may be an identity number. */
function loggedParams(params: unknown): unknown {
  if (typeof params !== 'object' || params === null) return params;
  const logged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    logged[key] = typeof value === 'string' ? capped(redactIdentityNumbers(value)) : value;
  }
  return logged;
}

/** The error code of each response, for its request log line. */
const responseErrorCodes = new WeakMap<ServerResponse, string>();

/** Records the error code a response answers with, for its request line. */
export function noteErrorCode(res: ServerResponse, code: string): void {
  responseErrorCodes.set(res, code);
}

function pathOf(url: string | undefined): string {
  return (url ?? '/').split('?')[0] ?? '/';
}

/** The request log line's serializers, as pino-http wraps them (pino's standard shapes first). */
const requestLogSerializers = {
  // The query string can carry a client's data; the parsed `query` object is logged instead,
  // redacted by rule (loggedQuery), and the path without identity numbers. Headers: the allow-list only. Every value is
  // capped, so no field of the client's makes a line long.
  req: pino.stdSerializers.wrapRequestSerializer((req) =>
    Object.assign(req, {
      url: capped(redactIdentityNumbers(pathOf(req.url))),
      headers: loggedHeaders(req.headers as Record<string, unknown> | undefined),
      query: loggedQuery(req.query),
      params: loggedParams(req.params),
    }),
  ),
  res: pino.stdSerializers.res,
  err: pino.stdSerializers.err,
};

/**
 * One line per request when its response ends, as pino-http writes it ("request completed",
 * "request aborted" or "request errored", with `req`, `res`, `responseTime`, `err` and our
 * `errorCode`), and `req.log`, a child logger bound to the serialized request.
 *
 * Hand-written rather than pino-http because pino-http makes each request's child logger up
 * front, which serializes the request and runs the logger's redaction paths over it (over a
 * hundred) whether or not any line is ever written, and at LOG_LEVEL=warn most requests write
 * none (the figures: tools/bench/README.md). Here the child is made on the
 * first use of `req.log`, or for the request line when its level is enabled, so a request that
 * logs nothing builds nothing; what is logged is the same. pino-http stays the source of the
 * `req.log` / `req.id` typings.
 */
const REQUEST_LOG = Symbol('request log');
interface RequestLogState {
  own: () => Logger;
  replaced: Logger | undefined;
}

function requestLogLevel(
  quietPaths: ReadonlySet<string>,
  url: string | undefined,
  statusCode: number,
  err: unknown,
): Level {
  if (quietPaths.has(pathOf(url)) && statusCode !== 500) return 'debug';
  if (err || statusCode >= 500) return 'error';
  if (statusCode >= 400) return 'warn';
  return 'info';
}

/** What a request log line reads of a request answered outside Express (see requestLineWriter). */
export interface LoggedRequest {
  id: string;
  method: string | undefined;
  /** The URL as the client sent it (Express's originalUrl). */
  originalUrl: string;
  url: string;
  query: Record<string, unknown>;
  params: Record<string, string>;
  headers: Record<string, unknown>;
  socket: { remoteAddress?: string; remotePort?: number };
}

/**
 * The request log line of a successful response written outside Express (a fast path in front of
 * createHttpApp's app): the same level rules, serializers and "request completed" line as the
 * middleware, so such a request logs as if Express had answered it. Call it once the response
 * ended; `startMs` is when the request arrived (Date.now()).
 */
export function requestLineWriter(
  logger: Logger,
  quietPaths: readonly string[] = DEFAULT_QUIET_PATHS,
): (req: LoggedRequest, res: ServerResponse, startMs: number) => void {
  const base = logger.child({}, { serializers: requestLogSerializers });
  const quiet = new Set(quietPaths);
  return (req, res, startMs) => {
    const level = requestLogLevel(quiet, req.url, res.statusCode, undefined);
    if (!base.isLevelEnabled(level)) return;
    base.child({ req })[level]({ res, responseTime: Date.now() - startMs }, 'request completed');
  };
}

export function requestLogger(
  app: Express,
  logger: Logger,
  quietPaths: ReadonlySet<string>,
): RequestHandler {
  const base = logger.child({}, { serializers: requestLogSerializers });
  const levelOf = (req: Request, res: ServerResponse, err: unknown): Level =>
    requestLogLevel(quietPaths, req.url, res.statusCode, err);
  const withErrorCode = (res: ServerResponse, value: Record<string, unknown>) => {
    const code = responseErrorCodes.get(res);
    return code ? { ...value, errorCode: code } : value;
  };

  // `req.log` (and `res.log`) read the request's state: defined once on Express's request and
  // response prototypes, since defining an accessor on each request object is what costs here.
  const logOf = (state: RequestLogState): Logger => state.replaced ?? state.own();
  for (const proto of [app.request, app.response]) {
    Object.defineProperty(proto, 'log', {
      configurable: true,
      get(this: { [REQUEST_LOG]?: RequestLogState }) {
        const state = this[REQUEST_LOG];
        return state ? logOf(state) : base;
      },
      set(this: { [REQUEST_LOG]?: RequestLogState }, value: Logger) {
        const state = this[REQUEST_LOG];
        if (state) state.replaced = value;
        else Object.defineProperty(this, 'log', { value, writable: true, configurable: true });
      },
    });
  }

  return (req, res, next) => {
    const start = Date.now();
    let bound: Logger | undefined;
    // `req.log` may be replaced by a route (e.g. a child with more bindings); the request line
    // keeps the request's own logger, as pino-http's does.
    const requestLog = () => (bound ??= base.child({ req }));
    const state: RequestLogState = { own: requestLog, replaced: undefined };
    (req as { [REQUEST_LOG]?: RequestLogState })[REQUEST_LOG] = state;
    (res as { [REQUEST_LOG]?: RequestLogState })[REQUEST_LOG] = state;

    const onEnd = (err?: Error) => {
      res.removeListener('close', onEnd);
      res.removeListener('finish', onEnd);
      res.removeListener('error', onEnd);
      const failure = err ?? (res as { err?: Error }).err;
      const level = levelOf(req, res, failure);
      if (!base.isLevelEnabled(level)) return;
      const responseTime = Date.now() - start;
      if (failure || res.statusCode >= 500) {
        const error = failure ?? new Error(`failed with status code ${res.statusCode}`);
        requestLog()[level](
          withErrorCode(res, { res, err: error, responseTime }),
          'request errored',
        );
        return;
      }
      requestLog()[level](
        withErrorCode(res, { res, responseTime }),
        !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted',
      );
    };
    res.on('close', onEnd);
    res.on('finish', onEnd);
    res.on('error', onEnd);
    next();
  };
}
