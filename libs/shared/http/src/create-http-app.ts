import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import express, {
  type ErrorRequestHandler,
  type Express,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { pino, type Level } from 'pino';
// Only for its typings of req.log and req.id (the request logger below is our own).
import type {} from 'pino-http';
import type { Logger } from '@nhp/shared-logger';
import { allowedMethods } from './allowed-methods';
import {
  AppError,
  badRequest,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  unsupportedMediaType,
} from '@nhp/shared-errors';
import type { ErrorFormatter, FormattedError } from './error-formatters';
import { registerParserErrorResponder, takeRefusal } from './parser-errors';

/** Media types parsed as JSON (privacy-service.md lists exactly these). */
export const JSON_MEDIA_TYPES = [
  'application/json',
  'application/json-patch+json',
  'text/json',
  'application/*+json',
];
export const REQUEST_ID_HEADER = 'X-Request-Id';

type BodyLimit = string | number;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const DEFAULT_QUIET_PATHS = ['/health', '/livez', '/readyz'];

export interface CreateHttpAppOptions {
  logger: Logger;
  /** The service's error body: each app brings its own formatter. */
  errorFormatter: ErrorFormatter;
  /**
   * Largest accepted JSON body (bytes or a string such as '100kb'); larger bodies get 413. A
   * function chooses the limit per request (per-route limits); it sees the request before routing.
   */
  bodyLimit?: BodyLimit | ((req: Request) => BodyLimit);
  /** Registers the service's routes. Runs after parsing and health, before 404/405. */
  routes: (app: Express) => void;
  /** Mounted before the routes (see @nhp/shared-health's healthRouter). */
  health?: Router;
  /** Express "trust proxy". Off by default: req.ip is the peer unless a deployment says otherwise. */
  trustProxy?: boolean | number | string;
  /** Paths whose request log lines are debug, not info (probes hit them every few seconds). */
  quietPaths?: readonly string[];
}

/**
 * Request headers a log line may carry. Everything else is left out: credentials under names no
 * redaction list can foresee (X-Auth-Token, a vendor's session header) and padding that would make
 * a line as long as the header block.
 */
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

function loggedQuery(query: unknown): unknown {
  if (typeof query !== 'object' || query === null) return query;
  const logged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    logged[capped(key)] = typeof value === 'string' ? capped(value) : value;
  }
  return logged;
}

/** The error code of each response, for its request log line. */
const responseErrorCodes = new WeakMap<ServerResponse, string>();

function pathOf(url: string | undefined): string {
  return (url ?? '/').split('?')[0] ?? '/';
}

/**
 * Fresh request ids: UUID-shaped (version 4 and variant bits set), random per process in all but
 * the last 9 digits, which count requests in decimal (decimal digits are hex digits too). Unique
 * across processes with overwhelming probability and within one for 10^9 requests, and a fifth of
 * the cost of randomUUID (whose entropy refills showed on a cached read, a few microseconds of
 * work); a request id is a correlation key, not a secret, so it need not be unpredictable. The
 * counter stays a small integer and is padded by slicing: both keep it cheap.
 */
const requestIds = (() => {
  const hex = randomBytes(12).toString('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  const prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 23)}`;
  const zeros = '000000000';
  let counter = randomBytes(4).readUInt32BE(0) % 1e9;
  return () => {
    counter = counter === 999_999_999 ? 0 : counter + 1;
    const digits = String(counter);
    return prefix + zeros.slice(digits.length) + digits;
  };
})();

/**
 * The request id for an incoming X-Request-Id value: kept when it is a plain token of at most 128
 * characters (so ids correlate across services), otherwise a fresh UUID-shaped id (so a caller
 * cannot inject log-breaking text).
 */
export function requestIdFrom(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : requestIds();
}

const requestId: RequestHandler = (req, res, next) => {
  const id = requestIdFrom(req.headers['x-request-id']);
  req.id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
};

/** The request log line's serializers, as pino-http wraps them (pino's standard shapes first). */
const requestLogSerializers = {
  // The query string can carry a client's data; the parsed `query` object is logged instead,
  // where the logger's redaction applies to it. Headers: the allow-list only. Every value is
  // capped, so no field of the client's makes a line long.
  req: pino.stdSerializers.wrapRequestSerializer((req) =>
    Object.assign(req, {
      url: capped(pathOf(req.url)),
      headers: loggedHeaders(req.headers as Record<string, unknown> | undefined),
      query: loggedQuery(req.query),
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
 * hundred) whether or not any line is ever written. Measured on a trivial JSON route on the
 * project's 2-core machine at LOG_LEVEL=warn: 0.31 ms of CPU a request with pino-http, 0.17 ms
 * with no request logging at all, about 0.25 ms with this one. Here the child is made on the
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

function requestLogger(
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

const unsupportedBody = (req: { get(name: string): string | undefined }) =>
  unsupportedMediaType(
    'UNSUPPORTED_MEDIA_TYPE',
    `Content-Type ${req.get('content-type') ?? '(none)'} is not supported; send ${JSON_MEDIA_TYPES.join(', ')}`,
  );

/**
 * A body on a method that takes one must be JSON; anything else is refused before routing.
 * req.is() is null when there is no body, false when there is one of another type. One case needs
 * reading: Node's own HTTP client (and so supertest, undici and friends) sends a body-less POST as
 * an empty chunked body without Content-Type, which is not "a body" for the caller; so a body
 * without Content-Type is read (within the size limit) and refused only if it is non-empty.
 */
function requireJsonBody(limit: string | number): RequestHandler {
  const readUntyped = readingBody(express.raw({ type: () => true, limit }), false);
  return (req, res, next) => {
    // A body already read to its end was read by the JSON parser (nothing else runs before this):
    // no need to match its type again, which costs as much as the rest of this check.
    if (!BODY_METHODS.has(req.method) || req.readableEnded || req.is(JSON_MEDIA_TYPES) !== false) {
      next();
      return;
    }
    if (req.get('content-type') !== undefined) throw unsupportedBody(req);
    readUntyped(req, res, (err?: unknown) => {
      if (err) {
        next(err);
      } else if (Buffer.isBuffer(req.body) && req.body.length > 0) {
        next(unsupportedBody(req));
      } else {
        req.body = undefined;
        next();
      }
    });
  };
}

/**
 * What body-parser passes on when the decompressor refuses the body (`Content-Encoding: gzip` on
 * bytes that are not gzip, a truncated stream): zlib's own error with status 400 and no `type`,
 * which no mapping recognises, so it was answered 500. It is the client's error: 400.
 */
function contentDecodingError(err: unknown, req: Request): AppError | undefined {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return undefined;
  const candidate = err as { type?: unknown; status?: unknown } | null;
  if (typeof candidate !== 'object' || candidate === null || candidate.type !== undefined) {
    return undefined;
  }
  if (candidate.status !== 400) return undefined;
  const named = DECODED_ENCODINGS.has(encoding) ? encoding : 'the declared';
  return badRequest(
    'MALFORMED_CONTENT_ENCODING',
    `Request body is not valid ${named} data (Content-Encoding)`,
    undefined,
    { cause: err },
  );
}

/** The encodings body-parser decodes (zstd only where Node has it). */
const DECODED_ENCODINGS = new Set(['gzip', 'br', 'deflate', 'zstd']);

const UNPAIRED_SURROGATE = /\p{Cs}/u;

function unpairedSurrogateIn(text: string): boolean {
  return UNPAIRED_SURROGATE.test(text);
}

/**
 * Whether a parsed JSON value holds a string (a value or a key) with an unpaired UTF-16 surrogate,
 * which only the escape `\uD800`-`\uDFFF` without its partner produces. Such a string is not
 * Unicode text (I-JSON, RFC 7493 §2.1, forbids it): `encodeURIComponent` throws on it, and UTF-8
 * (MongoDB, NATS, hashes) silently turns it into U+FFFD. Walked with an explicit stack, since a body
 * within the limit can nest deeper than the call stack goes.
 */
function holdsUnpairedSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (unpairedSurrogateIn(item)) return true;
    } else if (Array.isArray(item)) {
      for (const element of item) pending.push(element);
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, member] of Object.entries(item)) {
        if (unpairedSurrogateIn(key)) return true;
        pending.push(member);
      }
    }
  }
  return false;
}

/**
 * The refusal of a parsed JSON body that holds an unpaired surrogate (see holdsUnpairedSurrogate),
 * or undefined when it holds none: what createHttpApp answers, for code that reads bodies before
 * Express (privacy-api's status fast path) to answer alike.
 */
export function jsonBodyRefusal(body: unknown): AppError | undefined {
  if (!holdsUnpairedSurrogate(body)) return undefined;
  return badRequest(
    'MALFORMED_JSON',
    'Request body holds a string with an unpaired surrogate escape (\\uD800-\\uDFFF), which is not text',
  );
}

/**
 * A body reader (body-parser) whose refusals all reach the error handler as client errors: a body
 * the decompressor refuses is a 400, not an unknown error. With `json`, a parsed body that is not
 * text (jsonBodyRefusal) is refused before any route reads it.
 */
function readingBody(reader: RequestHandler, json: boolean): RequestHandler {
  return (req, res, next) => {
    const before = req.body as unknown;
    reader(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) {
        next(contentDecodingError(err, req) ?? err);
        return;
      }
      // Only a body this reader parsed: one handed over already parsed was checked where it was.
      const body = req.body as unknown;
      next(json && body !== before ? jsonBodyRefusal(body) : undefined);
    });
  };
}

/** One handler per distinct limit the function answers (a few at most), built on first use. */
function perLimit(
  limitOf: (req: Request) => BodyLimit,
  build: (limit: BodyLimit) => RequestHandler,
): RequestHandler {
  const handlers = new Map<BodyLimit, RequestHandler>();
  return (req, res, next) => {
    const limit = limitOf(req);
    let handler = handlers.get(limit);
    if (!handler) {
      handler = build(limit);
      handlers.set(limit, handler);
    }
    return handler(req, res, next);
  };
}

/** 404, or 405 with Allow when the path exists for other methods. OPTIONS answers 204 with Allow. */
function unmatched(app: Express): RequestHandler {
  return (req, res) => {
    const path = req.path;
    const allowed = allowedMethods(app.router, path);
    if (allowed.length === 0 || allowed.includes(req.method)) {
      throw notFound('NOT_FOUND', `No resource at ${req.method} ${path}`);
    }
    const allow = allowed.join(', ');
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', allow);
      res.status(204).end();
      return;
    }
    throw methodNotAllowed(
      'METHOD_NOT_ALLOWED',
      `${req.method} is not allowed on ${path}; use ${allow}`,
      undefined,
      {
        headers: { Allow: allow },
      },
    );
  };
}

interface BodyParserError {
  type: string;
  status: number;
  limit?: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  const candidate = err as Partial<BodyParserError> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.type === 'string' &&
    typeof candidate.status === 'number' &&
    candidate.status >= 400 &&
    candidate.status < 500
  );
}

/**
 * Maps what Express and body-parser throw for a bad request onto AppErrors with messages of our
 * own (body-parser's parse message quotes the client's body). Returns undefined for anything that
 * is a bug or an outage: those become a 500.
 */
export function toClientError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (isBodyParserError(err)) {
    switch (err.type) {
      case 'entity.parse.failed':
        return badRequest('MALFORMED_JSON', 'Request body is not valid JSON');
      case 'entity.too.large':
        return payloadTooLarge(
          'PAYLOAD_TOO_LARGE',
          `Request body is larger than ${err.limit === undefined ? 'the limit' : `${err.limit} bytes`}`,
        );
      case 'encoding.unsupported':
        return unsupportedMediaType(
          'UNSUPPORTED_CONTENT_ENCODING',
          'Content-Encoding is not supported',
        );
      case 'charset.unsupported':
        return unsupportedMediaType(
          'UNSUPPORTED_CHARSET',
          'Request body charset is not supported; send UTF-8',
        );
      default:
        return new AppError({
          code: 'BAD_REQUEST',
          status: err.status,
          message: 'The request could not be read',
        });
    }
  }
  // The router fails to decode a path parameter such as /items/%E0%A4%A.
  if (err instanceof URIError && (err as URIError & { status?: number }).status === 400) {
    return badRequest('MALFORMED_PATH', 'Request path contains a malformed percent-encoding');
  }
  return undefined;
}

function errorHandler(formatter: ErrorFormatter): ErrorRequestHandler {
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
    responseErrorCodes.set(res, appError.code);
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

/**
 * The Express 5 app both APIs are built on. Order matters and is fixed here: request id, request
 * log, JSON parsing, 415 for other bodies, health, the service's routes, 404/405, error handler.
 */
export function createHttpApp(options: CreateHttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // ETags are each route's decision (refsync-api derives strong ones from the data version); an
  // automatic weak hash of every error or status body only adds noise.
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? false);
  // Flat string values only ("a[b]=1" stays a key): schemas see what the client literally sent.
  app.set('query parser', 'simple');

  app.use(requestId);
  app.use(requestLogger(app, options.logger, new Set(options.quietPaths ?? DEFAULT_QUIET_PATHS)));
  // A request the server refused before routing (no Host, an unmet Expect): answered here, before
  // anything reads its body.
  app.use((req, _res, next) => next(takeRefusal(req)));
  const bodyLimit = options.bodyLimit ?? '100kb';
  const json = (limit: BodyLimit) =>
    readingBody(express.json({ limit, type: JSON_MEDIA_TYPES }), true);
  if (typeof bodyLimit === 'function') {
    app.use(perLimit(bodyLimit, json));
    app.use(perLimit(bodyLimit, requireJsonBody));
  } else {
    app.use(json(bodyLimit));
    app.use(requireJsonBody(bodyLimit));
  }
  if (options.health) app.use(options.health);
  options.routes(app);
  app.use(unmatched(app));
  app.use(errorHandler(options.errorFormatter));
  registerParserErrorResponder(app, {
    formatter: options.errorFormatter,
    logger: options.logger,
    newRequestId: () => requestIdFrom(undefined),
    noteErrorCode: (res, code) => responseErrorCodes.set(res, code),
    app,
  });
  return app;
}
