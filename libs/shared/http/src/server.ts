import http, { type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface DrainState {
  closing: boolean;
  inFlight: Set<ServerResponse>;
}

/** Servers started by `listen` track their in-flight responses so `closeServer` can drain them. */
const drainStates = new WeakMap<Server, DrainState>();

/** Tells a keep-alive client this connection ends with the current response. */
function endKeepAlive(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}

/**
 * Starts an HTTP server for the app (an Express app or any request listener); resolves once it
 * listens (port 0 picks a free port).
 */
export function listen(app: RequestListener, port: number, host?: string): Promise<Server> {
  const server = http.createServer();
  const state: DrainState = { closing: false, inFlight: new Set() };
  drainStates.set(server, state);

  server.on('request', (_req, res: ServerResponse) => {
    if (state.closing) endKeepAlive(res);
    state.inFlight.add(res);
    res.once('close', () => {
      state.inFlight.delete(res);
      // The socket may now be idle; while closing, an idle socket only delays exit.
      if (state.closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  // After the tracker, so a response the app ends synchronously is already tracked.
  server.on('request', app);

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
    for (const res of state.inFlight) endKeepAlive(res);
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
