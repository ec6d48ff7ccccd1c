import {
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { AppError, badRequest, headersTooLarge, payloadTooLarge } from '@nhp/shared-errors';
import { redactIdentityNumbers, type Logger } from '@nhp/shared-logger';
import type { ErrorContext, ErrorFormatter, FormattedError } from './error-formatters';

/**
 * Errors Node's HTTP parser raises (a header block over `maxHeaderSize`, bytes that are not
 * HTTP/1.1, a request not received within `headersTimeout`/`requestTimeout`) never reach Express:
 * Node hands them to the server's 'clientError' listener with the raw socket, and without one it
 * answers with an empty body or just closes. This module answers them with the app's own error
 * body, so a client sees one error format whatever layer refused its request.
 */

/** What createHttpApp registers for its app: the app's error body and its logger. */
export interface ParserErrorResponder {
  formatter: ErrorFormatter;
  logger: Logger;
  /** Records the error code of a response the app already held, for its request log line. */
  noteErrorCode?: (res: ServerResponse, code: string) => void;
  /** A fresh request id (the app's own kind). */
  newRequestId: () => string;
  /**
   * The app itself: a request Node hands over for the server to refuse (an `Expect` it cannot
   * meet, no `Host`) is passed to it marked (see refuseRequest), so the app's request id, request
   * log line and error handler answer it like any other refusal.
   */
  app?: RequestListener;
}

const responders = new WeakMap<object, ParserErrorResponder>();

export function registerParserErrorResponder(
  app: RequestListener,
  responder: ParserErrorResponder,
): void {
  responders.set(app, responder);
}

export function parserErrorResponderOf(app: RequestListener): ParserErrorResponder | undefined {
  return responders.get(app);
}

/** The AppError for an error Node's parser raised (see the codes in Node's llhttp and http docs). */
export function parserAppError(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return headersTooLarge(
        'HEADERS_TOO_LARGE',
        'Request headers are larger than the server accepts',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError({
        code: 'REQUEST_TIMEOUT',
        status: 408,
        message: 'The request was not received in time',
      });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return payloadTooLarge('PAYLOAD_TOO_LARGE', 'Chunk extensions are larger than accepted');
    default:
      return badRequest('MALFORMED_REQUEST', 'The request is not valid HTTP/1.1');
  }
}

/** Requests the server refuses before the app routes them (see refuseRequest). */
const refusals = new WeakMap<IncomingMessage, AppError>();

/**
 * A request whose head Node parsed but the server must not serve: an HTTP/1.1 request without
 * `Host` (RFC 9112 §3.2: 400) and an `Expect` other than 100-continue (RFC 9110 §10.1.1: 417).
 * Node answers both itself with an empty body unless the server takes them (the
 * 'checkExpectation' event, `requireHostHeader: false`); `listen` does, and refuses them here.
 */
export function refusalOf(req: IncomingMessage): AppError | undefined {
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return badRequest('MISSING_HOST', 'An HTTP/1.1 request needs a Host header', undefined, {
      headers: { Connection: 'close' },
    });
  }
  return undefined;
}

export function expectationFailed(): AppError {
  return new AppError({
    code: 'EXPECTATION_FAILED',
    status: 417,
    message: 'The Expect header asks for something this server does not do (only 100-continue)',
    // The client may be sending a body it was told to hold back: the connection ends here.
    headers: { Connection: 'close' },
  });
}

/**
 * Refuses a request with `err`: through the app when it is createHttpApp's (marked, so its first
 * middleware after the request id and log throws `err`), else with a neutral text body.
 */
export function refuseRequest(
  req: IncomingMessage,
  res: ServerResponse,
  err: AppError,
  responder: ParserErrorResponder | undefined,
): void {
  if (responder?.app) {
    refusals.set(req, err);
    responder.app(req, res);
    return;
  }
  const payload = err.message;
  res.writeHead(err.status, {
    ...err.headers,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** createHttpApp's middleware for refuseRequest: throws the refusal of a marked request. */
export function takeRefusal(req: IncomingMessage): AppError | undefined {
  const err = refusals.get(req);
  if (err) refusals.delete(req);
  return err;
}

/** After answering, the socket is given this long to deliver the answer before it is cut. */
const LINGER_MS = 1000;
const REQUEST_LINE = /^[A-Z]{1,16} (\/[\x21-\x7e]{0,2047}) HTTP\/1\.[01]\r?\n/;
const answered = new WeakSet<Socket>();

/**
 * The path of the request line at the start of the bytes the parser failed on, when they begin
 * with one: the parser error carries only the failing chunk, so this is best effort and "/"
 * otherwise. The query string is left out, as everywhere an error names its request.
 */
function pathOfRawPacket(raw: unknown): string {
  if (!Buffer.isBuffer(raw)) return '/';
  const match = REQUEST_LINE.exec(raw.toString('latin1', 0, 2100));
  return match?.[1]?.split('?')[0] ?? '/';
}

const safeFormat = (
  responder: ParserErrorResponder | undefined,
  err: AppError,
  ctx: ErrorContext,
): FormattedError => {
  if (responder) {
    try {
      return responder.formatter(err, ctx);
    } catch (formatError) {
      responder.logger.error({ err: formatError }, 'error formatter failed');
    }
  }
  // Without the app's formatter (a listener not built by createHttpApp): a neutral text body.
  return { status: err.status, contentType: 'text/plain; charset=utf-8', body: err.message };
};

function payloadOf(formatted: FormattedError): string {
  return /[/+]json\b/.test(formatted.contentType)
    ? JSON.stringify(formatted.body)
    : String(formatted.body);
}

/**
 * The 'clientError' listener's work. `inFlight` is the response of the socket's current request,
 * when the app is already handling one (a body that trickles in past `requestTimeout`).
 */
export function answerParserError(
  err: NodeJS.ErrnoException & { rawPacket?: unknown },
  socket: Socket,
  inFlight: ServerResponse | undefined,
  responder: ParserErrorResponder | undefined,
): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const appError = parserAppError(err.code);
  if (inFlight) {
    answerThroughResponse(appError, inFlight, responder);
  } else {
    answerOnSocket(appError, err, socket, responder);
  }
}

/**
 * The app holds the request (Express is reading its body), so the answer goes through its
 * response: the request log line then shows the status and code like any other error.
 */
function answerThroughResponse(
  appError: AppError,
  res: ServerResponse,
  responder: ParserErrorResponder | undefined,
): void {
  const req = res.req as typeof res.req & { originalUrl?: string; id?: unknown };
  const ctx: ErrorContext = {
    originalUrl: req.originalUrl ?? req.url ?? '/',
    headers: req.headers,
    id: req.id,
  };
  const formatted = safeFormat(responder, appError, ctx);
  const payload = payloadOf(formatted);
  responder?.noteErrorCode?.(res, appError.code);
  for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
  res.setHeader('Connection', 'close');
  res.writeHead(formatted.status, {
    'Content-Type': formatted.contentType,
    'Content-Length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** No request exists yet: the response is written to the socket by hand, as Node's docs say. */
function answerOnSocket(
  appError: AppError,
  err: NodeJS.ErrnoException & { rawPacket?: unknown },
  socket: Socket,
  responder: ParserErrorResponder | undefined,
): void {
  const id = responder?.newRequestId();
  const path = pathOfRawPacket(err.rawPacket);
  const formatted = safeFormat(responder, appError, { originalUrl: path, headers: {}, id });
  const payload = payloadOf(formatted);
  // Never the error itself: its rawPacket holds the client's bytes, headers and tokens included.
  responder?.logger.warn(
    {
      reqId: id,
      // Without identity numbers, as the request log line shows a path.
      path: redactIdentityNumbers(path),
      statusCode: formatted.status,
      errorCode: appError.code,
      parserCode: err.code,
    },
    'request refused by the HTTP parser',
  );
  const headers: Record<string, string | number> = {
    ...appError.headers,
    'Content-Type': formatted.contentType,
    'Content-Length': Buffer.byteLength(payload),
    Connection: 'close',
  };
  if (id !== undefined) headers['X-Request-Id'] = id;
  const head = [`HTTP/1.1 ${formatted.status} ${STATUS_CODES[formatted.status] ?? 'Error'}`];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  // end() rather than destroy(): destroying with the client's unread bytes pending resets the
  // connection, and the client may lose the answer. The timer cuts a client that never closes.
  socket.end(`${head.join('\r\n')}\r\n\r\n${payload}`);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}
