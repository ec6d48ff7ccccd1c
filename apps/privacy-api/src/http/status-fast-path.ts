import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { setCaller, type AuthRequest, type Caller } from '@nhp/privacy-auth';
import type { SettingsService } from '@nhp/privacy-domain';
import type { Logger } from '@nhp/shared-logger';
import type { RouteMetrics } from '@nhp/shared-metrics';
import { setHttpRoute } from '@nhp/shared-tracing';
import {
  jsonBodyRefusal,
  REQUEST_ID_HEADER,
  requestIdFrom,
  requestLineWriter,
} from '@nhp/shared-http';
import type { RequestHandler } from 'express';
import { checkStatus, SETTINGS_PATHS, statusRequestSchema } from '../routes/settings';
import type { PrivacyApiMetrics } from '../metrics';
import { DEBUG_HEADER } from './debug-header';

/**
 * A fast path for the status check (POST /personverninnstillinger/sjekkinnbyggerspistatus/v2),
 * the operation clients call once per citizen and definition, in front of the Express app.
 * Express's middleware stack costs more CPU per request than the check's own work (see the bench
 * README), so the common case, a well-formed JSON body from an authenticated caller that gets a
 * 200, is answered here with the same pieces the route uses: PrivacyAuth.verify, the body
 * contract, the settings use case (checkStatus), requestIdFrom and shared-http's request log line.
 *
 * Everything else goes to Express, in one of two ways:
 * - untouched, before anything of the request was read: other paths and methods, a query string,
 *   an X-hn-isdebug header, a Content-Type other than the JSON ones (charset utf-8 at most), a
 *   Content-Encoding, a body without a Content-Length, empty or over the limit, a trusted proxy
 *   setting (Express then computes the URL a DPoP proof names), and a token or proof that
 *   does not verify (verification leaves no trace but counters: the jti of a proof is only
 *   remembered once it is accepted, so Express's check answers the same).
 * - after the body was read (a stream is read once): the body is handed over as parsed
 *   (`req.body`, which Express's body parser leaves alone on a finished stream) with the caller
 *   already verified (`setCaller`, which `authenticate` then trusts: a second check would see the
 *   proof's jti as a replay). A missing scope or a body the contract refuses then fails in the
 *   route as it always does; a body that is not JSON, JSON that is not text (an unpaired
 *   surrogate: shared-http's jsonBodyRefusal), or an error of the use case, is thrown by
 *   `rethrowFastPathError` (the first of the app's routes), so the app's error handler, formatter
 *   and request log answer it.
 */

/** Errors found on the fast path, for Express to answer (see rethrowFastPathError). */
const pendingErrors = new WeakMap<IncomingMessage, unknown>();

/** Express middleware, mounted first among the routes: throws the error the fast path found. */
export const rethrowFastPathError: RequestHandler = (req, _res, next) => {
  if (pendingErrors.has(req)) {
    const err = pendingErrors.get(req);
    pendingErrors.delete(req);
    throw err;
  }
  next();
};

/** The error body-parser raises for a body that is not JSON (toClientError maps it to 400). */
function malformedJson(): Error {
  return Object.assign(new SyntaxError('Request body is not valid JSON'), {
    type: 'entity.parse.failed',
    status: 400,
    statusCode: 400,
    expose: true,
  });
}

/** What body-parser raises when the client goes away mid-body. */
function aborted(): Error {
  return Object.assign(new Error('request aborted'), {
    type: 'request.aborted',
    status: 400,
    statusCode: 400,
    expose: true,
  });
}

/** Media types createHttpApp parses as JSON (JSON_MEDIA_TYPES): the exact types, and any +json. */
const JSON_TYPE = /^(?:application\/json|text\/json|application\/[a-z0-9!#$&^_.-]+\+json)$/;
/** The parameters the fast path accepts: none, or charset=utf-8 (body-parser's default anyway). */
const UTF8_PARAMETER = /^charset="?utf-8"?$/;

/** Whether Express would parse this Content-Type as UTF-8 JSON with nothing else to check. */
export function plainJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon))
    .trim()
    .toLowerCase();
  if (!JSON_TYPE.test(type)) return false;
  if (semicolon === -1) return true;
  const parameter = contentType
    .slice(semicolon + 1)
    .trim()
    .toLowerCase();
  return UTF8_PARAMETER.test(parameter);
}

const DIGITS = /^\d{1,9}$/;
/** JSON's whitespace, which body-parser's strict check skips before the first character. */
const LEADING_WHITESPACE = /^[ \t\n\r]*/;

/**
 * The body as body-parser's strict JSON parser reads it (UTF-8, a byte-order mark dropped, an
 * object or array at the top), or `undefined` when it would refuse it. Only non-empty bodies get
 * here (an empty one goes to Express untouched: body-parser reads it as {}).
 */
function parseJson(bytes: Buffer): { value: unknown; refusal?: unknown } | undefined {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const first = text.charAt(LEADING_WHITESPACE.exec(text)?.[0].length ?? 0);
  if (first !== '{' && first !== '[') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  // Only a \u escape can make an unpaired surrogate; without one the walk is not needed.
  const refusal = text.includes('\\u') ? jsonBodyRefusal(value) : undefined;
  return refusal ? { value, refusal } : { value };
}

export interface StatusFastPathDeps {
  logger: Logger;
  /** PrivacyAuth.verify: the same check as the Express middleware. */
  verify: (request: AuthRequest) => Promise<Caller>;
  /** The settings use cases the Express route uses too. */
  settings: SettingsService;
  /** PRIVACY_API_BASE_PATH ('' for none). */
  basePath: string;
  /** The body limit of the status route (BODY_LIMIT). */
  bodyLimit: number;
  /** Express "trust proxy": with any setting but off, every request goes to Express. */
  trustProxy: boolean | number | string;
  /** The app behind the fast path. */
  express: (req: IncomingMessage, res: ServerResponse) => void;
  /** Its answers are counted in the same request metrics as Express's, and as fast status checks. */
  metrics?: Pick<PrivacyApiMetrics, 'http' | 'statusChecks'>;
}

export interface StatusFastPathStats {
  /** Requests answered by the fast path. */
  answered: number;
  /** Requests it took and then handed to Express (a refusal, an error) after reading the head. */
  handedOver: number;
}

/** A request listener that answers the request or hands it to Express (never both, never neither). */
export interface StatusFastPath {
  (req: IncomingMessage, res: ServerResponse): void;
  stats(): StatusFastPathStats;
}

export function createStatusFastPath(deps: StatusFastPathDeps): StatusFastPath {
  const { logger, express } = deps;
  // Routing is case-insensitive and ignores one trailing slash (Express's defaults). Each path
  // maps to its route template as mounted, the request metrics' label of the Express route.
  const templates = [
    SETTINGS_PATHS.status,
    ...(deps.basePath ? [`${deps.basePath}${SETTINGS_PATHS.status}`] : []),
  ];
  const paths = new Map<string, RouteMetrics | undefined>(
    templates.flatMap((template) => {
      const route = deps.metrics?.http.route(template);
      const path = template.toLowerCase();
      return [
        [path, route],
        [`${path}/`, route],
      ];
    }),
  );
  const statusChecks = deps.metrics?.statusChecks;
  const enabled = !deps.trustProxy;
  /** The route template Express would name for this path (for the request's span). */
  const route = (url: string) =>
    deps.basePath && url.toLowerCase().startsWith(deps.basePath.toLowerCase())
      ? `${deps.basePath}${SETTINGS_PATHS.status}`
      : SETTINGS_PATHS.status;
  const writeRequestLine = requestLineWriter(logger);
  const counts: StatusFastPathStats = { answered: 0, handedOver: 0 };
  // Asked once and kept (pino's isLevelEnabled walks a prototype chain), following level changes.
  let infoEnabled = logger.isLevelEnabled('info');
  logger.on('level-change', () => {
    infoEnabled = logger.isLevelEnabled('info');
  });

  /** Whether the request is one the fast path may take, judged on its head alone. */
  function eligible(req: IncomingMessage): boolean {
    if (req.method !== 'POST' || !enabled) return false;
    const url = req.url;
    if (url === undefined || !paths.has(url.toLowerCase())) return false;
    const headers = req.headers;
    if (headers[DEBUG_HEADER] !== undefined) return false;
    if (headers.host === undefined || headers.host === '') return false;
    if (headers['transfer-encoding'] !== undefined) return false;
    if (headers['content-encoding'] !== undefined) return false;
    const length = headers['content-length'];
    if (length === undefined || !DIGITS.test(length)) return false;
    const bytes = Number(length);
    if (bytes === 0 || bytes > deps.bodyLimit) return false;
    return plainJsonType(headers['content-type']);
  }

  /** Hands the request to Express with its body read: as parsed, and/or an error to answer. */
  function handOver(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    error: { err: unknown } | undefined,
  ): void {
    (req as IncomingMessage & { body?: unknown }).body = body;
    if (error) pendingErrors.set(req, error.err);
    counts.handedOver++;
    express(req, res);
  }

  function readBody(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.once('end', () =>
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
      );
      req.once('error', reject);
      req.once('aborted', () => reject(aborted()));
    });
  }

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    start: number,
    startedAt: number,
  ): Promise<void> {
    const url = req.url as string;
    const headers = req.headers;
    const protocol = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
    let caller: Caller;
    try {
      caller = await deps.verify({
        method: 'POST',
        url: `${protocol}://${headers.host}${url}`,
        headers,
      });
    } catch {
      // Express checks again and answers the refusal (nothing of the request was read).
      counts.handedOver++;
      express(req, res);
      return;
    }
    setCaller(req, caller);

    let bytes: Buffer;
    try {
      bytes = await readBody(req);
    } catch (err) {
      handOver(req, res, undefined, { err });
      return;
    }
    const parsed = parseJson(bytes);
    if (!parsed) {
      handOver(req, res, undefined, { err: malformedJson() });
      return;
    }
    if (parsed.refusal) {
      // Not text (an unpaired surrogate): createHttpApp's refusal, in its words.
      handOver(req, res, undefined, { err: parsed.refusal });
      return;
    }
    const valid = caller.has('read') ? statusRequestSchema.safeParse(parsed.value) : undefined;
    if (!valid?.success) {
      // The route refuses it (scope or contract) in its own words.
      handOver(req, res, parsed.value, undefined);
      return;
    }
    let result: unknown;
    try {
      result = await checkStatus(deps.settings, caller, valid.data);
    } catch (err) {
      handOver(req, res, parsed.value, { err });
      return;
    }

    // As Express's requestId middleware and res.json write it. A string body goes out with the
    // head in one write (a Buffer would make two, as a writev).
    const requestId = requestIdFrom(headers['x-request-id']);
    const json = JSON.stringify(result);
    res.statusCode = 200;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', String(Buffer.byteLength(json, 'utf8')));
    if (infoEnabled) {
      res.once('finish', () =>
        writeRequestLine(
          {
            id: requestId,
            method: 'POST',
            originalUrl: url,
            url,
            query: {},
            params: {},
            headers,
            socket: req.socket,
          },
          res,
          start,
        ),
      );
    }
    counts.answered++;
    setHttpRoute(req, route(url));
    res.end(json);
    paths.get(url.toLowerCase())?.record('POST', 200, (performance.now() - startedAt) / 1000);
    statusChecks?.inc('fast');
  }

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (!eligible(req)) {
      express(req, res);
      return;
    }
    const start = Date.now();
    answer(req, res, start, performance.now()).catch((err: unknown) => {
      // A fault of the fast path itself (a bug): Express answers if it still can.
      logger.error({ err }, 'status fast path failed');
      if (!res.headersSent) {
        if (req.readableEnded) handOver(req, res, undefined, { err });
        else express(req, res);
      }
    });
  };
  return Object.assign(handle, { stats: () => ({ ...counts }) });
}
