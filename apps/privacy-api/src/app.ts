import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PrivacyAuth } from '@nhp/privacy-auth';
import { createHttpApp } from '@nhp/shared-http';
import { healthRouter, type Health } from '@nhp/shared-health';
import { Router, type Express, type Request, type RequestHandler } from 'express';
import type { PrivacyContext } from './context';
import { checkDebugHeader } from './http/debug-header';
import { createPrivacyErrorFormatter } from './http/error-response';
import { createStatusFastPath, type StatusFastPathStats } from './http/status-fast-path';
import { createPrivacyApiMetrics, type PrivacyApiMetrics } from './metrics';
import { createDocsRoutes } from './openapi/docs-routes';
import { createDefinitionRoutes } from './routes/definitions';
import { createInclusionRoutes } from './routes/inclusions';
import { createPartRoutes } from './routes/parts';
import { createRepresentationRoutes } from './routes/representation';
import { createSettingsRoutes } from './routes/settings';
import { createYouthAppRoutes } from './routes/youth-app';

export interface PrivacyApiDeps {
  context: PrivacyContext;
  health: Health;
  /** The access-token check (@nhp/privacy-auth's createPrivacyAuth(...).authenticate). */
  authenticate: RequestHandler;
  /** Default: metrics of this app alone (without process metrics). main.ts passes the process's. */
  metrics?: PrivacyApiMetrics;
  /** false: /metrics is served on METRICS_PORT, not here. Default true. */
  serveMetrics?: boolean;
}

/**
 * The routes anyone may call without a token: the health probe, the metrics and the API
 * description (schemas only, no data). Every other route, including unknown paths, first meets
 * `authenticate`.
 */
export const PUBLIC_ROUTES: ReadonlyArray<{ method: 'GET'; path: string }> = [
  { method: 'GET', path: '/health' },
  // Operational figures, never personal data (README, "Metrics"); absent with METRICS_PORT.
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/openapi.json' },
  // The events' contract (AsyncAPI 3), schemas only, like the OpenAPI document.
  { method: 'GET', path: '/asyncapi.json' },
  { method: 'GET', path: '/docs' },
];

/** The one operation whose body may carry a proof (up to 4 MiB decoded, base64 in JSON). */
export const LARGE_BODY_PATHS = ['/personverninnstillinger/settinnbyggerspersonverninnstilling/v2'];
export const LARGE_BODY_LIMIT = 6 * 1024 * 1024;
export const BODY_LIMIT = 256 * 1024;
/**
 * Set requests with a proof: at most two bodies above the small limit in memory at once (each costs
 * about 30 MB while it is parsed, decoded and stored); the others wait unread (see README, Memory).
 */
export const LARGE_BODIES = { above: BODY_LIMIT, concurrent: 2 };

/**
 * The body limit of a request, chosen before routing: routing is case-insensitive and ignores a
 * trailing slash, and so does this.
 */
export function bodyLimitFor(basePath: string): (req: Request) => number {
  const large = new Set(
    LARGE_BODY_PATHS.flatMap((path) => [path, `${basePath}${path}`]).map((p) => p.toLowerCase()),
  );
  return (req) => {
    const path = req.path.toLowerCase();
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    return large.has(trimmed) ? LARGE_BODY_LIMIT : BODY_LIMIT;
  };
}

/**
 * The check of a request's head before its body is read: the X-hn-isdebug header, then the token
 * (and proof), for every request but the public routes' (PUBLIC_ROUTES, matched as routing matches
 * them: any letter case, a trailing slash). A request without valid credentials is so refused
 * before anything reads, inflates or parses its body, and takes no large-body place; the routes'
 * own `authenticate` then finds the caller set and lets the request through.
 */
export function checkBeforeBody(basePath: string, authenticate: RequestHandler): RequestHandler {
  const publicPaths = new Set(
    PUBLIC_ROUTES.flatMap(({ path }) => [path, `${basePath}${path}`]).map((p) => p.toLowerCase()),
  );
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    if ((req.method === 'GET' || req.method === 'HEAD') && publicPaths.has(trimmed)) {
      next();
      return;
    }
    // Throws its refusal (400) before the token is looked at, as the routes order them.
    checkDebugHeader(req, res, () => undefined);
    // Returned, so that Express 5 answers its rejection (401) as any route's.
    return authenticate(req, res, next);
  };
}

/**
 * Builds privacy-api from its dependencies; tests call it with real infrastructure, main.ts with
 * the configured one. Order: request id, log, the X-hn-isdebug check and authentication of every
 * request but the public routes' (checkBeforeBody), body parsing (413/415), /health, the X-hn-isdebug
 * check again, the public description, authentication (done already but for public paths), the
 * areas' routes (at the root and under
 * PRIVACY_API_BASE_PATH), 404/405, the ErrorResponse formatter.
 */
export function createApp(deps: PrivacyApiDeps): Express {
  const { context } = deps;
  const { basePath, allowDebug } = context.options;
  const { useCases } = context;
  const metrics = deps.metrics ?? createPrivacyApiMetrics({ defaultMetrics: false });
  const formatError = createPrivacyErrorFormatter({ allowDebug });

  const api = Router();
  api.use(createPartRoutes(useCases.parts));
  api.use(createDefinitionRoutes(useCases.definitions));
  api.use(createSettingsRoutes(useCases.settings, metrics));
  api.use(createInclusionRoutes(useCases.inclusions));
  api.use(createRepresentationRoutes(useCases.representation));
  api.use(createYouthAppRoutes(useCases.youthApp));

  const docs = createDocsRoutes(context);

  return createHttpApp({
    logger: context.logger,
    // Every error answer passes here once: refusals are counted by reason.
    errorFormatter: (err, req) => {
      metrics.countRefusal(err);
      return formatError(err, req);
    },
    metrics: metrics.http,
    serveMetrics: deps.serveMetrics,
    beforeBody: checkBeforeBody(basePath, deps.authenticate),
    bodyLimit: bodyLimitFor(basePath),
    largeBodies: LARGE_BODIES,
    trustProxy: context.options.trustProxy,
    health: healthRouter(deps.health, { probes: false }),
    routes(app) {
      app.use(checkDebugHeader);
      app.use(docs);
      if (basePath) app.use(basePath, docs);
      app.use(deps.authenticate);
      app.use(api);
      if (basePath) app.use(basePath, api);
    },
  });
}

export interface PrivacyAppDeps extends Omit<PrivacyApiDeps, 'authenticate'> {
  /** createPrivacyAuth(...): its middleware guards the Express routes, its verify the fast path. */
  auth: Pick<PrivacyAuth, 'authenticate' | 'verify'>;
  /** Default true; false serves every request through Express (tests compare the two). */
  fastPath?: boolean;
}

/** A Node request listener (for listen() or supertest) with the Express app behind it. */
export interface PrivacyApp {
  (req: IncomingMessage, res: ServerResponse): void;
  /** The Express app: every request the fast path does not answer. */
  readonly express: Express;
  /** What the fast path answered and handed over (zeros when it is off). */
  fastPathStats(): StatusFastPathStats;
  readonly metrics: PrivacyApiMetrics;
}

/**
 * privacy-api as main.ts serves it: the Express app (createApp) behind the status check's fast
 * path (src/http/status-fast-path.ts), both with the same token check and settings use cases.
 * Pass `express` as listen()'s `errorsFrom`, so parser errors are answered with ErrorResponse.
 */
export function createPrivacyApp(deps: PrivacyAppDeps): PrivacyApp {
  const { context } = deps;
  const metrics = deps.metrics ?? createPrivacyApiMetrics({ defaultMetrics: false });
  const express = createApp({
    context,
    health: deps.health,
    authenticate: deps.auth.authenticate,
    metrics,
    serveMetrics: deps.serveMetrics,
  });
  if (deps.fastPath === false) {
    return Object.assign((req: IncomingMessage, res: ServerResponse) => express(req, res), {
      express,
      fastPathStats: () => ({ answered: 0, handedOver: 0 }),
      metrics,
    });
  }
  const fastPath = createStatusFastPath({
    logger: context.logger,
    verify: deps.auth.verify,
    settings: context.useCases.settings,
    basePath: context.options.basePath,
    bodyLimit: BODY_LIMIT,
    trustProxy: context.options.trustProxy,
    express,
    metrics,
  });
  return Object.assign(fastPath, { express, fastPathStats: fastPath.stats, metrics });
}
