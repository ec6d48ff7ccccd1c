import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';

export const METRICS_PATH = '/metrics';

/** GET /metrics as an Express handler (on an app's own port). */
export function metricsHandler(registry: Registry): RequestHandler {
  return async (_req, res) => {
    const body = await registry.metrics();
    res.set('Content-Type', registry.contentType).send(body);
  };
}

function answer(res: ServerResponse, status: number, body: string, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}

/**
 * A request listener that serves only GET (and HEAD) /metrics: the listener of METRICS_PORT, a
 * port of its own that answers nothing else (no API, no token, no personal data).
 */
export function metricsListener(registry: Registry): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH) return answer(res, 404, 'Not Found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return answer(res, 405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
    }
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => answer(res, 500, 'metrics could not be collected\n'),
    );
  };
}
