import http, { type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

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
 * listens (port 0 picks a free port).
 *
 * Draining costs a request one property write: connections are tracked as they open, and each
 * one's latest response sits on its socket, so `closeServer` finds the responses in flight. (A
 * listener per response, the obvious way, cost refsync-api's cached reads 8% of their throughput,
 * measured head to head.)
 */
export function listen(app: RequestListener, port: number, host?: string): Promise<Server> {
  const state: DrainState = { closing: false, sockets: new Set() };
  const server = http.createServer((req, res) => {
    (req.socket as TrackedSocket)[CURRENT_RESPONSE] = res;
    if (state.closing) {
      endKeepAlive(res);
      closeIdleAfter(server, res);
    }
    app(req, res);
  });
  drainStates.set(server, state);
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
