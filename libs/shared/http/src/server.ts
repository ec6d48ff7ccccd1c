import http, { type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { HTTP_SERVER_DEFAULTS } from '@nhp/shared-config';
import {
  answerParserError,
  expectationFailed,
  parserErrorResponderOf,
  refusalOf,
  refuseRequest,
} from './parser-errors';
import { traceHttpRequests, tracingEnabled } from '@nhp/shared-tracing';

/**
 * The server limits, under the names of the environment variables that set them (commonEnvShape in
 * @nhp/shared-config), so an app passes its parsed config as it is.
 */
export interface HttpServerLimits {
  /** Time to receive a request's headers (Node's `headersTimeout`). */
  HTTP_HEADERS_TIMEOUT_MS: number;
  /** Time to receive a whole request, body included (Node's `requestTimeout`); then 408. */
  HTTP_REQUEST_TIMEOUT_MS: number;
  /** Idle time of a keep-alive connection after a response (Node's `keepAliveTimeout`). */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
  /** Open connections; further ones are dropped as they arrive (Node's `maxConnections`). */
  HTTP_MAX_CONNECTIONS: number;
}

export interface ListenOptions extends Partial<HttpServerLimits> {
  /**
   * The createHttpApp app whose error body and logger answer errors Node's HTTP parser raises
   * (431, 400, 408 before the app sees a request). Default: the listener itself, which is right
   * whenever it is the app createHttpApp returned; a listener that wraps one names it here.
   */
  errorsFrom?: RequestListener;
}

/** The latest response of a connection, stored on its socket (one property write per request). */
const CURRENT_RESPONSE = Symbol('shared-http.currentResponse');
type TrackedSocket = Socket & { [CURRENT_RESPONSE]?: ServerResponse };

interface DrainState {
  closing: boolean;
  /** Connections, each with its current response on the socket; closed ones until pruned. */
  sockets: Set<TrackedSocket>;
}

/** Closed sockets are pruned from DrainState.sockets when it reaches this size (or twice the open ones). */
const PRUNE_AT_LEAST = 1024;

/** Servers started by `listen` track their connections so `closeServer` can drain them. */
const drainStates = new WeakMap<Server, DrainState>();

/**
 * How often Node checks for requests past their timeouts (its default, 30 s, would let a 1 s
 * timeout fire up to 31 s late): a quarter of the shorter timeout, between 10 ms and 30 s.
 */
function checkingInterval(limits: HttpServerLimits): number {
  const shorter = Math.min(limits.HTTP_HEADERS_TIMEOUT_MS, limits.HTTP_REQUEST_TIMEOUT_MS);
  return Math.min(30_000, Math.max(10, Math.floor(shorter / 4)));
}

function serverLimits(options: ListenOptions): HttpServerLimits {
  const limits: HttpServerLimits = {
    HTTP_HEADERS_TIMEOUT_MS:
      options.HTTP_HEADERS_TIMEOUT_MS ?? HTTP_SERVER_DEFAULTS.HTTP_HEADERS_TIMEOUT_MS,
    HTTP_REQUEST_TIMEOUT_MS:
      options.HTTP_REQUEST_TIMEOUT_MS ?? HTTP_SERVER_DEFAULTS.HTTP_REQUEST_TIMEOUT_MS,
    HTTP_KEEP_ALIVE_TIMEOUT_MS:
      options.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? HTTP_SERVER_DEFAULTS.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    HTTP_MAX_CONNECTIONS: options.HTTP_MAX_CONNECTIONS ?? HTTP_SERVER_DEFAULTS.HTTP_MAX_CONNECTIONS,
  };
  // Node refuses this combination too, but in its own words; say it with the variables' names.
  if (
    limits.HTTP_REQUEST_TIMEOUT_MS > 0 &&
    limits.HTTP_HEADERS_TIMEOUT_MS > limits.HTTP_REQUEST_TIMEOUT_MS
  ) {
    throw new RangeError(
      `HTTP_HEADERS_TIMEOUT_MS (${limits.HTTP_HEADERS_TIMEOUT_MS}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${limits.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  }
  return limits;
}

/** Tells a keep-alive client this connection ends with the current response. */
function endKeepAlive(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}

/**
 * While closing: a response that may leave its connection idle (its headers went out without
 * `Connection: close`) closes idle connections once it is done, so the close does not wait for them.
 */
function closeIdleAfter(server: Server, res: ServerResponse): void {
  res.once('close', () => setImmediate(() => server.closeIdleConnections()));
}

/**
 * Starts an HTTP server for the app (an Express app or any request listener); resolves once it
 * listens (port 0 picks a free port). `options` are the server limits, each defaulting to
 * HTTP_SERVER_DEFAULTS; apps pass their parsed config (`listen(app, port, host, config)`).
 * Errors Node's HTTP parser raises are answered with the app's error body (see parser-errors.ts).
 *
 * Draining costs a request one property write: connections are tracked as they open, and each
 * one's latest response sits on its socket, so `closeServer` finds the responses in flight. (A
 * listener per response, the obvious way, is work on every request for the rare close: it cost
 * refsync-api's cached reads a measurable share of their throughput, tools/bench/README.md.)
 */
export async function listen(
  app: RequestListener,
  port: number,
  host?: string,
  options: ListenOptions = {},
): Promise<Server> {
  const limits = serverLimits(options);
  const state: DrainState = { closing: false, sockets: new Set() };
  const serverOptions: http.ServerOptions = {
    headersTimeout: limits.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: limits.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: limits.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: checkingInterval(limits),
    // Checked below instead, so the refusal is the app's error body (Node's is empty).
    requireHostHeader: false,
  };
  const responder = parserErrorResponderOf(options.errorsFrom ?? app);
  const track = (req: http.IncomingMessage, res: ServerResponse) => {
    (req.socket as TrackedSocket)[CURRENT_RESPONSE] = res;
    if (state.closing) {
      endKeepAlive(res);
      closeIdleAfter(server, res);
    }
  };
  // A SERVER span per request while tracing is on; off, the app is called as it is (no cost).
  const serve = tracingEnabled() ? traceHttpRequests(app) : app;
  const server = http.createServer(serverOptions, (req, res) => {
    track(req, res);
    const refusal = refusalOf(req);
    if (refusal) refuseRequest(req, res, refusal, responder);
    else serve(req, res);
  });
  // An Expect other than 100-continue (Node answers 100-continue itself and then emits 'request').
  server.on('checkExpectation', (req: http.IncomingMessage, res: ServerResponse) => {
    track(req, res);
    refuseRequest(req, res, refusalOf(req) ?? expectationFailed(), responder);
  });
  server.maxConnections = limits.HTTP_MAX_CONNECTIONS;
  drainStates.set(server, state);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: TrackedSocket) => {
    const res = socket[CURRENT_RESPONSE];
    answerParserError(err, socket, res && !res.writableEnded ? res : undefined, responder);
  });
  // No 'close' listener per socket either: Node adds and removes its own on every request, and a
  // second listener turns that into array copies. Closed sockets are dropped in bulk instead.
  let pruneAt = PRUNE_AT_LEAST;
  server.on('connection', (socket: TrackedSocket) => {
    if (state.sockets.size >= pruneAt) {
      for (const open of state.sockets) if (open.destroyed) state.sockets.delete(open);
      pruneAt = Math.max(PRUNE_AT_LEAST, state.sockets.size * 2);
    }
    state.sockets.add(socket);
  });

  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server);
    });
  });
}

/** The port a listening server got (useful with port 0). */
export function serverPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/**
 * Graceful close: stop accepting connections, let in-flight requests finish (their responses say
 * `Connection: close`), close idle keep-alive sockets at once, and after `timeoutMs` destroy
 * whatever is still open. Resolves when the server has closed; never rejects.
 */
export function closeServer(server: Server, timeoutMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  const state = drainStates.get(server);
  if (state) {
    state.closing = true;
    for (const socket of state.sockets) {
      if (socket.destroyed) continue;
      const res = socket[CURRENT_RESPONSE];
      if (!res || res.writableFinished) continue; // idle: closeIdleConnections below
      endKeepAlive(res);
      closeIdleAfter(server, res);
    }
  }

  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
