import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { inRequestContext } from '@nhp/shared-tracing';
import type { Logger } from '@nhp/shared-logger';
import { METRICS_PATH, metricsHandler, type HttpMetrics } from '@nhp/shared-metrics';
import { routeTemplate } from './allowed-methods';
import { jsonBodyReader, perLimit, requireJsonBody, type BodyLimit } from './body';
import { errorHandler } from './error-handler';
import { largeBodyGate, type LargeBodyOptions } from './large-body-gate';
import type { ErrorFormatter } from './error-formatters';
import {
  answerParserError,
  parserErrorResponderOf,
  registerParserErrorResponder,
  takeRefusal,
} from './parser-errors';
import { requestId, requestIdFrom } from './request-id';
import { DEFAULT_QUIET_PATHS, noteErrorCode, requestLogger } from './request-log';
import { unmatched } from './unmatched';

export interface CreateHttpAppOptions {
  logger: Logger;
  /** The service's error body: each app brings its own formatter. */
  errorFormatter: ErrorFormatter;
  /**
   * Largest accepted JSON body (bytes or a string such as '100kb'); larger bodies get 413. A
   * function chooses the limit per request (per-route limits); it sees the request before routing.
   */
  bodyLimit?: BodyLimit | ((req: Request) => BodyLimit);
  /**
   * At most `concurrent` bodies larger than `above` bytes read and handled at once, on routes whose
   * body limit exceeds `above`; the others wait unread (see largeBodyGate). Default: no bound.
   */
  largeBodies?: LargeBodyOptions;
  /**
   * Checks of a request's head that run before any body is read (authentication): a request it
   * refuses is answered without its body being read, decompressed or parsed, and takes no
   * large-body place. Runs after the request id, the log and the server's own refusals.
   */
  beforeBody?: RequestHandler;
  /** Registers the service's routes. Runs after parsing and health, before 404/405. */
  routes: (app: Express) => void;
  /** Mounted before the routes (see @nhp/shared-health's healthRouter). */
  health?: Router;
  /** Express "trust proxy". Off by default: req.ip is the peer unless a deployment says otherwise. */
  trustProxy?: boolean | number | string;
  /** Paths whose request log lines are debug, not info (probes hit them every few seconds). */
  quietPaths?: readonly string[];
  /**
   * Request metrics (@nhp/shared-metrics): every request is counted by its route template, and
   * GET /metrics serves the app's registry, before any route (it never needs a token).
   */
  metrics?: HttpMetrics;
  /** false: count requests but serve /metrics elsewhere (METRICS_PORT). Default true. */
  serveMetrics?: boolean;
}

/**
 * Request headers a log line may carry. Everything else is left out: credentials under names no
 * redaction list can foresee (X-Auth-Token, a vendor's session header) and padding that would make
 * a line as long as the header block.
 */
/**
 * The Express 5 app both APIs are built on. Order matters and is fixed here: request id, request
 * log, the checks before the body (beforeBody), JSON parsing, 415 for other bodies, health, /metrics, the service's routes, 404/405, error
 * handler. Request metrics, when given, wrap them all.
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

  const metrics = options.metrics;
  if (metrics) {
    // A request answered before its route ran (401 from authentication, 405) still gets the
    // template of the route its path matches; only paths no route matches are "unmatched".
    metrics.instrument(app, (req) => routeTemplate(app.router, req.path));
    app.use(metrics.middleware);
  }
  app.use(requestId);
  app.use(requestLogger(app, options.logger, new Set(options.quietPaths ?? DEFAULT_QUIET_PATHS)));
  // A request the server refused before routing (no Host, an unmet Expect): answered here, before
  // anything reads its body.
  app.use((req, _res, next) => next(takeRefusal(req)));
  if (options.beforeBody) app.use(options.beforeBody);
  const bodyLimit = options.bodyLimit ?? '100kb';
  const json = (limit: BodyLimit) => jsonBodyReader(limit);
  if (options.largeBodies) {
    const gate = largeBodyGate({
      ...options.largeBodies,
      // A sender that stalls while holding a place is answered as Node answers a request that
      // is not received in time (408, through this app's error body), and its place passes on.
      onStall: (req, res) =>
        answerParserError(
          Object.assign(new Error('request body stalled'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
          req.socket,
          res,
          parserErrorResponderOf(app),
        ),
    });
    const { above } = options.largeBodies;
    const limitOf = typeof bodyLimit === 'function' ? bodyLimit : () => bodyLimit;
    // A limit given as a string ('6mb') counts as large: the gate then looks at the body itself.
    app.use((req, res, next) => {
      const limit = limitOf(req);
      if (typeof limit === 'number' && limit <= above) next();
      else gate(req, res, next);
    });
  }
  if (typeof bodyLimit === 'function') {
    app.use(perLimit(bodyLimit, json));
    app.use(perLimit(bodyLimit, requireJsonBody));
  } else {
    app.use(json(bodyLimit));
    app.use(requireJsonBody(bodyLimit));
  }
  // With tracing on, the routes run in the request's context again: body-parser and the gate call
  // back from outside it (see inRequestContext).
  app.use((req, _res, next) => inRequestContext(req, next));
  if (options.health) app.use(options.health);
  if (metrics && options.serveMetrics !== false) {
    app.get(METRICS_PATH, metricsHandler(metrics.registry));
  }
  options.routes(app);
  app.use(unmatched(app));
  const handleError = errorHandler(options.errorFormatter);
  // An error passed on from a body parser's callback is answered (and logged) in the request's
  // context too.
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) =>
    inRequestContext(req, () => handleError(err, req, res, next)),
  );
  registerParserErrorResponder(app, {
    formatter: options.errorFormatter,
    logger: options.logger,
    newRequestId: () => requestIdFrom(undefined),
    noteErrorCode,
    app,
  });
  return app;
}
