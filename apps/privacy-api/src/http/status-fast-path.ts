import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import proxyaddr from 'proxy-addr';
import { setCaller, type AuthenticatedCaller, type AuthRequest } from '@nhp/privacy-auth';
import { sjekkInnbyggersPiStatusV2RequestSchema } from '@nhp/privacy-contracts';
import type { SettingsUseCases } from '@nhp/privacy-domain';
import type { Logger } from '@nhp/shared-logger';
import type { RouteMetrics } from '@nhp/shared-metrics';
import { setHttpRoute } from '@nhp/shared-tracing';
import {
  jsonBodyReaderOutsideExpress,
  REQUEST_ID_HEADER,
  requestIdFrom,
  requestLineWriter,
} from '@nhp/shared-http';
import { SETTINGS_PATHS } from '../routes/settings';
import type { PrivacyApiMetrics } from '../metrics';
import { runAs } from './caller';
import { DEBUG_HEADER } from './debug-header';
import { rememberUseCaseFailure } from './handed-over';

/**
 * A fast path for the status check (POST /personverninnstillinger/sjekkinnbyggerspistatus/v2),
 * the operation clients call once per citizen and definition, in front of the Express app.
 * Express's middleware stack costs more CPU per request than the check's own work
 * (tools/bench/README.md, privacy-api), so the common case, a JSON body from an authenticated caller that gets a 200, is
 * answered here with the pieces the app uses: PrivacyAuth.verify, shared-http's JSON body reader
 * (the app's own: media types, charset, limit, refusals), the body contract, the settings use
 * case, requestIdFrom and shared-http's request log line.
 *
 * Everything else goes to Express, in one of two ways:
 * - untouched, before anything of the request was read: other paths and methods, a query string,
 *   an X-hn-isdebug header, no Host, a Content-Encoding or Transfer-Encoding, no Content-Length
 *   or 0 (an empty body, which the contract refuses anyway), a token or proof that does not
 *   verify (verification leaves no trace but counters: the jti of a proof is only remembered once
 *   it is accepted, so Express's check answers the same), and a body the reader does not read
 *   (none, or not of a JSON type).
 * - after the body was read: with the caller verified (`setCaller`, which `authenticate` then
 *   trusts: a second check would see the proof's jti as a replay). The app's body stage hands on
 *   what the reader found (the body, or its refusal) instead of reading again, the route hands on
 *   the use case's error instead of running it again (handed-over.ts), and the route answers as
 *   it always does: a refusal of the body, a missing scope, a body the contract refuses, an error
 *   of the use case.
 */

/**
 * Behind a trusted proxy (HTTP_TRUST_PROXY, Express's "trust proxy"), the URL a DPoP proof names is
 * the one the client addressed, which X-Forwarded-Proto and X-Forwarded-Host describe: read here as
 * Express reads them for `req.protocol` and `req.host` (the first value of each, and only when the
 * peer is trusted), so that the fast path and the route accept and refuse the same proofs. Whether
 * the peer is trusted is proxy-addr's answer, the library Express asks, for the setting compiled as
 * Express compiles it (its compileTrust, which it does not export: true, a hop count, or a list of
 * addresses, subnets and names). X-Forwarded-For is left alone as the route leaves it: nothing on
 * this path reads the client's address (`req.ip`); the request line names the peer, as Express's does.
 */
function compileTrust(setting: boolean | number | string): (addr: string, hop: number) => boolean {
  if (setting === true) return () => true;
  if (typeof setting === 'number') return (_addr, hop) => hop < setting;
  if (typeof setting === 'string')
    return proxyaddr.compile(setting.split(',').map((v) => v.trim()));
  return proxyaddr.compile([]);
}

/** Peers whose answer is remembered (a few load balancers in practice; cleared beyond this). */
const TRUSTED_PEERS_KEPT = 1024;

/**
 * Whether the peer at `addr` is trusted as the nearest proxy (hop 0): proxy-addr's answer, kept per
 * address. The answer depends on the address alone, and the same few proxies send every request:
 * asked per request, proxy-addr parses the address again each time.
 */
function trustsPeer(trust: (addr: string, hop: number) => boolean): (addr: string) => boolean {
  const answers = new Map<string, boolean>();
  return (addr) => {
    let answer = answers.get(addr);
    if (answer === undefined) {
      answer = trust(addr, 0);
      if (answers.size >= TRUSTED_PEERS_KEPT) answers.clear();
      answers.set(addr, answer);
    }
    return answer;
  };
}

/** The first of a forwarded header's values, as Express takes it (undefined when absent or empty). */
function firstForwarded(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const comma = value.indexOf(',');
  return comma === -1 ? value : value.substring(0, comma);
}

/** Content-Length as Node's parser accepts it. */
const DIGITS = /^\d{1,15}$/;

export interface StatusFastPathDeps {
  logger: Logger;
  /** PrivacyAuth.verify: the same check as the Express middleware. */
  verify: (request: AuthRequest) => Promise<AuthenticatedCaller>;
  /** The settings use cases the Express route uses too. */
  settings: SettingsUseCases;
  /** PRIVACY_API_BASE_PATH ('' for none). */
  basePath: string;
  /** The body limit of the status route (BODY_LIMIT), as the app applies it. */
  bodyLimit: number;
  /** Express "trust proxy" (HTTP_TRUST_PROXY): whether X-Forwarded-Proto/Host name the URL. */
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
  const trustedPeer = trustsPeer(compileTrust(deps.trustProxy));
  /** The route template Express would name for this path (for the request's span). */
  const route = (url: string) =>
    deps.basePath && url.toLowerCase().startsWith(deps.basePath.toLowerCase())
      ? `${deps.basePath}${SETTINGS_PATHS.status}`
      : SETTINGS_PATHS.status;
  const writeRequestLine = requestLineWriter(logger);
  const readBody = jsonBodyReaderOutsideExpress(deps.bodyLimit);
  const counts: StatusFastPathStats = { answered: 0, handedOver: 0 };
  // Asked once and kept (pino's isLevelEnabled walks a prototype chain), following level changes.
  let infoEnabled = logger.isLevelEnabled('info');
  logger.on('level-change', () => {
    infoEnabled = logger.isLevelEnabled('info');
  });

  /** Whether the request is one the fast path may take, judged on its head alone. */
  function eligible(req: IncomingMessage): boolean {
    if (req.method !== 'POST') return false;
    const url = req.url;
    if (url === undefined || !paths.has(url.toLowerCase())) return false;
    const headers = req.headers;
    if (headers[DEBUG_HEADER] !== undefined) return false;
    if (headers.host === undefined || headers.host === '') return false;
    if (headers['transfer-encoding'] !== undefined) return false;
    if (headers['content-encoding'] !== undefined) return false;
    const length = headers['content-length'];
    return length !== undefined && DIGITS.test(length) && length !== '0';
  }

  /**
   * Hands a request whose caller was verified to Express (see the comment at the top), with the
   * caller bound to it: only then, as a request the fast path answers never needs it bound.
   */
  function handOver(req: IncomingMessage, res: ServerResponse, caller: AuthenticatedCaller): void {
    setCaller(req, caller);
    counts.handedOver++;
    express(req, res);
  }

  /** A fault of the fast path itself (a bug): Express answers if it still can. */
  function fault(
    req: IncomingMessage,
    res: ServerResponse,
    err: unknown,
    caller?: AuthenticatedCaller,
  ): void {
    logger.error({ err }, 'status fast path failed');
    if (res.headersSent) return;
    if (caller) handOver(req, res, caller);
    else {
      counts.handedOver++;
      express(req, res);
    }
  }

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    start: number,
    startedAt: number,
  ): Promise<void> {
    const url = req.url as string;
    const headers = req.headers;
    // The URL the client addressed, as Express derives it (see compileTrust).
    let protocol = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
    let host = headers.host as string;
    if (trustedPeer(req.socket.remoteAddress as string)) {
      // Node joins repeated X-Forwarded-* headers into one string.
      const proto = headers['x-forwarded-proto'] as string | undefined;
      const forwardedHost = headers['x-forwarded-host'] as string | undefined;
      protocol = firstForwarded(proto)?.trim() ?? protocol;
      host = firstForwarded(forwardedHost)?.trimEnd() ?? host;
      if (host === '') {
        // A forwarded host that names none: Express's answer, untouched (nothing was read).
        express(req, res);
        return;
      }
    }
    let caller: AuthenticatedCaller;
    try {
      caller = await deps.verify({
        method: 'POST',
        url: `${protocol}://${host}${url}`,
        headers,
        rawHeaders: req.rawHeaders,
        connection: req.socket,
      });
    } catch {
      // Express checks again and answers the refusal (nothing of the request was read).
      counts.handedOver++;
      express(req, res);
      return;
    }
    try {
      const read = await readBody(req, res);
      if (!read.read) {
        // The reader left the stream alone (no body of a JSON type): Express answers it as ever,
        // with the caller bound (its proof's jti is spent).
        setCaller(req, caller);
        express(req, res);
        return;
      }
      const valid =
        read.refusal === undefined && caller.has('read')
          ? sjekkInnbyggersPiStatusV2RequestSchema.safeParse(read.body)
          : undefined;
      if (!valid?.success) {
        // The app refuses it (the body, the scope or the contract) in its own words.
        handOver(req, res, caller);
        return;
      }
      let result: unknown;
      try {
        const body = valid.data;
        result = await runAs(caller, undefined, (asCaller) =>
          deps.settings.checkStatus(asCaller, body),
        );
      } catch (err) {
        // The route answers the use case's error as the app answers any, without running it again.
        rememberUseCaseFailure(req, err);
        handOver(req, res, caller);
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
    } catch (err) {
      // A fault of the fast path itself (a bug): Express answers if it still can, for the caller
      // verified here (a second check would see a DPoP proof's jti as a replay).
      fault(req, res, err, caller);
    }
  }

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (!eligible(req)) {
      express(req, res);
      return;
    }
    const start = Date.now();
    answer(req, res, start, performance.now()).catch((err: unknown) => fault(req, res, err));
  };
  return Object.assign(handle, { stats: () => ({ ...counts }) });
}
