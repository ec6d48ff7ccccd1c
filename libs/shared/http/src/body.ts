import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Request, type RequestHandler } from 'express';
import { AppError, badRequest, unsupportedMediaType } from '@nhp/shared-errors';

/** Media types parsed as JSON (privacy-service.md lists exactly these). */
export const JSON_MEDIA_TYPES = [
  'application/json',
  'application/json-patch+json',
  'text/json',
  'application/*+json',
];

export type BodyLimit = string | number;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
export function requireJsonBody(limit: string | number): RequestHandler {
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
 * What the JSON body reader found for each request it read: the refusal, if any (the parsed body
 * is on `req.body`). A request is read once: read before Express (a fast path), the app's body
 * stage hands on this outcome instead of reading a stream that has ended.
 */
const jsonBodiesRead = new WeakMap<object, { refusal: unknown }>();

/**
 * A body reader (body-parser) whose refusals all reach the error handler as client errors: a body
 * the decompressor refuses is a 400, not an unknown error. With `json`, a parsed body that is not
 * text (jsonBodyRefusal) is refused before any route reads it, and the outcome is kept for the
 * request (see jsonBodiesRead).
 */
function readingBody(reader: RequestHandler, json: boolean): RequestHandler {
  return (req, res, next) => {
    const earlier = json ? jsonBodiesRead.get(req) : undefined;
    if (earlier) {
      next(earlier.refusal);
      return;
    }
    reader(req, res, (err?: unknown) => {
      let refusal: unknown;
      if (err !== undefined && err !== null) refusal = contentDecodingError(err, req) ?? err;
      else if (json) refusal = jsonBodyRefusal(req.body as unknown);
      if (json) jsonBodiesRead.set(req, { refusal });
      next(refusal);
    });
  };
}

/** One handler per distinct limit the function answers (a few at most), built on first use. */
export function perLimit(
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

/**
 * The JSON body reader every app uses (body-parser's, with the refusals above): for code that reads
 * a body before or beside Express (a fast path) to read it exactly as the app does.
 */
export function jsonBodyReader(limit: BodyLimit): RequestHandler {
  return readingBody(express.json({ limit, type: JSON_MEDIA_TYPES }), true);
}

/** A body read outside Express (see readJsonBody). */
export interface JsonBodyOutcome {
  /** Whether the reader read the stream (false: no body of a JSON type; the stream is untouched). */
  read: boolean;
  /** The parsed body, as routes see it in `req.body`. */
  body: unknown;
  /** What the app answers for this body (malformed JSON, too large, not text, ...), if anything. */
  refusal?: unknown;
}

/**
 * Reads a request's JSON body before Express sees it (a fast path in front of createHttpApp's
 * app), with the reader the app uses (jsonBodyReader): the same media types, charsets, encodings,
 * limit and refusals. Handed on to the app afterwards, the request is not read again: the app's
 * body stage hands on this outcome (the body as parsed, or the refusal for its error handler).
 *
 * The common request, `Content-Type: application/json` (UTF-8, said or not) with a
 * Content-Length within the limit and no Content-Encoding, is read by `readPlainJson` below
 * instead of body-parser; every other request goes to body-parser untouched.
 */
export function jsonBodyReaderOutsideExpress(
  limit: number,
): (req: IncomingMessage, res: ServerResponse) => Promise<JsonBodyOutcome> {
  const reader = jsonBodyReader(limit);
  return (req, res) => {
    if (plainJsonRequest(req, limit)) return readPlainJson(req);
    return new Promise((resolve) => {
      // The reader reads only Node's request (headers, stream) and sets `body` on it.
      reader(req as Request, res as Parameters<RequestHandler>[1], (refusal?: unknown) => {
        const body = (req as { body?: unknown }).body;
        const read = req.readableEnded;
        resolve(
          refusal === undefined || refusal === null ? { read, body } : { read, body, refusal },
        );
      });
    });
  };
}

/** The media types readPlainJson takes, as Content-Type says them (lower case, no spaces). */
const PLAIN_JSON_TYPES = new Set(['application/json', 'application/json;charset=utf-8']);
const CONTENT_LENGTH = /^\d{1,15}$/;

/** Whether body-parser would read the request as a UTF-8 JSON body of its declared length. */
function plainJsonRequest(req: IncomingMessage, limit: number): boolean {
  const { headers } = req;
  const type = headers['content-type'];
  if (type === undefined || !PLAIN_JSON_TYPES.has(type.toLowerCase().replace(/ /g, ''))) {
    return false;
  }
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) {
    return false;
  }
  const length = headers['content-length'];
  return (
    length !== undefined && CONTENT_LENGTH.test(length) && length !== '0' && Number(length) <= limit
  );
}

/** body-parser's error for what it cannot read: the shape toClientError maps (type, status). */
function bodyError(type: string, message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? {} : { cause }), {
    type,
    status: 400,
    statusCode: 400,
    expose: true,
  });
}

/** JSON texts body-parser's strict mode takes: an object or an array. */
const STRICT_JSON_START = /^[ \t\n\r]*[[{]/;

/**
 * body-parser's reading of a plain JSON request (plainJsonRequest), without its machinery: the
 * media type matching (type-is, content-type), the stream reader (raw-body), the decoder
 * (iconv-lite), which together cost about as much CPU as the status check's own work (the bench
 * README, privacy-api). Written by hand because no library reads a body this narrowly; it
 * answers as body-parser does: the body parsed in strict mode (an object or an array) after a
 * UTF-8 byte order mark is dropped, invalid UTF-8 decoded to U+FFFD, a body that does not parse
 * refused as `entity.parse.failed` (`req.body` undefined), one cut short as `request.aborted`, and
 * the outcome kept for the app's body stage (jsonBodiesRead) with the body on `req.body`. Tests
 * compare the two readers' outcomes on the same bytes.
 */
function readPlainJson(req: IncomingMessage): Promise<JsonBodyOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (body: unknown, refusal: unknown) => {
      if (settled) return;
      settled = true;
      req.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onAborted);
      (req as { body?: unknown }).body = body;
      jsonBodiesRead.set(req, { refusal });
      resolve(refusal === undefined ? { read: true, body } : { read: true, body, refusal });
    };
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onEnd = () => {
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      let text = bytes.toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (!STRICT_JSON_START.test(text)) {
        settle(
          undefined,
          bodyError('entity.parse.failed', 'Request body is not a JSON object or array'),
        );
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        settle(undefined, bodyError('entity.parse.failed', 'Request body is not valid JSON', err));
        return;
      }
      // Decoded UTF-8 holds no unpaired surrogate (an invalid sequence became U+FFFD): only a
      // `\u` escape can make one, so a text without any needs no walk of what it parsed to.
      settle(body, text.includes('\\u') ? jsonBodyRefusal(body) : undefined);
    };
    const onAborted = () => settle(undefined, bodyError('request.aborted', 'request aborted'));
    // `on`, not `once`: settle runs once and removes all four (a `once` wraps each listener anew).
    req.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onAborted);
  });
}
