import type { IncomingMessage, ServerResponse } from 'node:http';
import { SYNC_COMPLETED_SUBJECT } from '@nhp/refsync-contracts';
import {
  databaseUnavailable,
  REFSYNC_VERSION_CONFLICT,
  syncCompletedEvent,
} from '@nhp/refsync-data-access';
import { problemDetailsFormatter } from '@nhp/refsync-http';
import {
  createDatasetReads,
  DATASET_ROUTES,
  pathOf,
  type DatasetReader,
  type DatasetRoute,
  type ResponseStore,
  type VersionTracker,
} from '@nhp/refsync-read';
import { AppError } from '@nhp/shared-errors';
import {
  createHttpApp,
  REQUEST_ID_HEADER,
  renderApiDocsPage,
  requestIdFrom,
} from '@nhp/shared-http';
import type { Logger } from '@nhp/shared-logger';
import type { ConnectionChecks, RouteMetrics } from '@nhp/shared-metrics';
import { setHttpRoute } from '@nhp/shared-tracing';
import {
  onNatsReconnect,
  subscribeCloudEvents,
  type NatsConnection,
  type Subscription,
} from '@nhp/shared-messaging';
import type { Express, Request, Response, Router } from 'express';
import { API_KEY_HEADER, createApiKeyVerifier, type ApiKeyEntry } from './auth/api-keys';
import { authenticate } from './auth/connection-auth';
import { NegotiationMemo } from './http/negotiation';
import { RefsyncApiMetrics } from './metrics';
import { openApiDocument } from './openapi/openapi-document';
import { writeCached, writeNotModified } from './responses/write-cached';

export interface RefsyncAppDeps {
  logger: Logger;
  /** The read side of storage (createRefsyncReadRepository). */
  reader: DatasetReader;
  /** Accepted keys (already resolved: the development key is the caller's decision). */
  apiKeys: readonly ApiKeyEntry[];
  /** Source of sync-completed events; without it only the periodic check refreshes the version. */
  nats?: NatsConnection;
  /** /health, /livez and /readyz (@nhp/shared-health's probes router). */
  health?: Router;
  /** Byte bound of the response cache. */
  cacheMaxBytes: number;
  /** Period of the stored-version check. */
  versionCheckIntervalMs: number;
  /** How many versions back a diff is still cached (default 30). */
  recentVersionsCached?: number;
  /** Identity bodies above this size are cached gzip-compressed and inflated when sent (8 MiB). */
  identityMaxBytes?: number;
  /** The connection gauges' checks (refsync_api_mongodb_connected, refsync_api_nats_connected). */
  connections?: ConnectionChecks;
  /** Whether the service is ready now (its health's readiness), for refsync_api_ready. */
  ready?: () => Promise<boolean>;
  /** false: /metrics is served on REFSYNC_API_METRICS_PORT, not here. Default true. */
  serveMetrics?: boolean;
  /** prom-client's process metrics (default true; tests that build many apps turn them off). */
  defaultMetrics?: boolean;
}

/** A Node request listener (for http.createServer, listen() or supertest) with its parts. */
export interface RefsyncApp {
  (req: IncomingMessage, res: ServerResponse): void;
  /** The Express app behind the fast path: everything that is not a cached read. */
  readonly express: Express;
  readonly responses: ResponseStore;
  readonly versions: VersionTracker;
  /** Prometheus metrics, also served at GET /metrics. */
  readonly metrics: RefsyncApiMetrics;
  /**
   * Subscribes to sync-completed events on this connection (once; later calls are ignored).
   * createApp does it for `deps.nats`; main.ts calls it when a connection made after start-up is
   * ready.
   */
  listenForEvents(nats: NatsConnection): void;
  /** Reads the stored version so the first request is served from memory; never rejects. */
  warmUp(): Promise<number | undefined>;
  /** Stops the periodic check and the event subscription. */
  close(): Promise<void>;
}

/** How the read repository refuses a version two syncs have left behind, and the 503 after it. */
const versionConflicts = {
  is: (err: unknown) => err instanceof AppError && err.code === REFSYNC_VERSION_CONFLICT,
  exhausted: databaseUnavailable,
};

/** A dataset route with its request metrics (the Express route's, shared), found by path. */
interface ServedRoute {
  route: DatasetRoute;
  metrics: RouteMetrics;
}

/**
 * Builds refsync-api. Requests for the dataset paths first meet a fast path that answers from
 * memory (a cached body or a 304) without Express, a database read, serialisation or compression;
 * anything it cannot answer so (a cache miss, a refusal, a header value not negotiated before)
 * falls through to the Express route. Both decide with the same resolver (`reads.resolve` of
 * @nhp/refsync-read), so a request is checked, parsed and matched by one piece of code whichever
 * path answers it.
 */
export function createApp(deps: RefsyncAppDeps): RefsyncApp {
  const { logger } = deps;
  const memo = new NegotiationMemo();
  const keys = createApiKeyVerifier(deps.apiKeys);
  const reads = createDatasetReads({
    reader: deps.reader,
    versionConflicts,
    authenticate: (req: IncomingMessage) => authenticate(req, keys, API_KEY_HEADER),
    logger,
    cacheMaxBytes: deps.cacheMaxBytes,
    recentVersionsCached: deps.recentVersionsCached,
    identityMaxBytes: deps.identityMaxBytes,
  });
  const { responses, versions } = reads;
  versions.startPeriodicCheck(deps.versionCheckIntervalMs);
  const metrics = new RefsyncApiMetrics(
    {
      servedVersion: () => versions.current(),
      storedVersion: () => deps.reader.currentVersion(),
      cache: () => responses.usage(),
      ...deps.connections,
      ready: deps.ready,
    },
    { defaultMetrics: deps.defaultMetrics },
  );
  // The fast path records its answers in the series of the Express route it stands in for.
  const servedByPath = new Map<string, ServedRoute>(
    DATASET_ROUTES.map((route) => [route.path, { route, metrics: metrics.http.route(route.path) }]),
  );

  let subscription: Subscription | undefined;
  let stopReconnectRefresh: (() => void) | undefined;
  function listenForEvents(nats: NatsConnection): void {
    if (subscription) return;
    subscription = subscribeCloudEvents(
      nats,
      SYNC_COMPLETED_SUBJECT,
      syncCompletedEvent,
      async (event) => {
        const version = await versions.refresh('event');
        logger.info(
          { eventId: event.id, announced: event.data.currentVersion, version },
          'sync-completed event received',
        );
      },
      logger,
    );
    // An event published while this instance was disconnected is never delivered: read the
    // version again as soon as the connection is back, not only at the next periodic check.
    stopReconnectRefresh = onNatsReconnect(nats, () => {
      versions
        .refresh('reconnect')
        .catch((err: unknown) =>
          logger.warn({ err }, 'data version check after the NATS reconnect failed'),
        );
    });
  }
  if (deps.nats) listenForEvents(deps.nats);

  const docsOpenApi = openApiDocument();
  const openApiBytes = Buffer.from(JSON.stringify(docsOpenApi), 'utf8');

  /** The Express route of one dataset path: what the fast path does not answer. */
  function datasetHandler(route: DatasetRoute) {
    return async (req: Request, res: Response): Promise<void> => {
      const url = req.originalUrl;
      const headers = req.headers;
      let resolved = reads.resolve(
        req,
        route,
        url,
        memo.acceptsJson(headers.accept),
        memo.encodingFor(headers['accept-encoding']),
      );
      if (resolved.outcome === 'unnegotiated') {
        // Only an authenticated request gets here: header values are negotiated (and remembered)
        // for clients that hold a key, never for anyone who sends junk.
        const negotiated = memo.negotiate(req);
        resolved = reads.resolve(req, route, url, negotiated.acceptsJson, negotiated.encoding);
      }
      if (resolved.client !== undefined) req.log = req.log.child({ client: resolved.client });
      if (resolved.error) throw resolved.error;
      const { selection, encoding } = resolved;
      if (!selection || !encoding) throw new Error(`unexpected outcome ${resolved.outcome}`);

      let etag = resolved.etag;
      let response = resolved.response;
      let source: 'cache' | 'computed' | 'not-modified' =
        resolved.outcome === 'cached' ? 'cache' : 'not-modified';
      if (resolved.outcome === 'miss') {
        // Errors are AppErrors from storage (503 at once while the database is known to be
        // down) and are formatted as they are.
        ({ etag, response } = await reads.computeMiss(
          selection,
          encoding,
          headers['if-none-match'],
          req.log,
        ));
        if (response) {
          source = 'computed';
          metrics.cache.misses++;
        }
      } else if (response) {
        metrics.cache.hits++;
      }
      // pino-http's request line cannot carry the client name (bound above), so this line does.
      req.log.info({ etag, source }, 'dataset request');
      if (!response) writeNotModified(res, etag as string);
      else writeCached(res, response);
    };
  }

  const expressApp = createHttpApp({
    logger,
    errorFormatter: problemDetailsFormatter,
    health: deps.health,
    quietPaths: ['/health', '/livez', '/readyz', '/metrics'],
    // Requests counted by route template; /metrics served without a key (see README).
    metrics: metrics.http,
    serveMetrics: deps.serveMetrics,
    routes(app) {
      for (const route of DATASET_ROUTES) app.get(route.path, datasetHandler(route));
      // Schemas only, no data: readable without a key (see README, "Authentication").
      app.get('/openapi.json', (_req, res) => {
        res.type('application/json').send(openApiBytes);
      });
      app.get('/docs', (req, res) => {
        const origin = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
        res.type('html').send(
          renderApiDocsPage(docsOpenApi, {
            origin,
            credential: {
              curl: "-H 'X-API-KEY: <your key>'",
              badge: 'X-API-KEY',
              publicBadge: 'no key',
            },
          }),
        );
      });
    },
  });

  // pino's isLevelEnabled walks the logger's prototype chain on every call, a measurable share of a
  // cached read (tools/bench/README.md). The answer is kept and follows level changes.
  let debugEnabled = logger.isLevelEnabled('debug');
  logger.on('level-change', () => {
    debugEnabled = logger.isLevelEnabled('debug');
  });

  /** Answers a cached body or a 304 from memory, or returns false; never throws. */
  function fastPath(req: IncomingMessage, res: ServerResponse): boolean {
    const start = performance.now();
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '/';
    // Without a query string the URL is the path: one lookup, no scan for '?'.
    const served = servedByPath.get(url) ?? servedByPath.get(pathOf(url));
    if (!served) return false;
    const headers = req.headers;
    const resolved = reads.resolve(
      req,
      served.route,
      url,
      memo.acceptsJson(headers.accept),
      memo.encodingFor(headers['accept-encoding']),
    );
    const response = resolved.response;
    if (!response && resolved.outcome !== 'not-modified') return false;
    const requestId = requestIdFrom(headers['x-request-id']);
    setHttpRoute(req, served.route.path);
    if (response) {
      writeCached(res, response, { name: REQUEST_ID_HEADER, value: requestId });
      metrics.cache.hits++;
    } else {
      writeNotModified(res, resolved.etag as string, { name: REQUEST_ID_HEADER, value: requestId });
    }
    served.metrics.record(method, res.statusCode, (performance.now() - start) / 1000);
    // Debug: at info, one line per cached read would cost more than serving it (see README).
    if (debugEnabled) {
      logger.debug(
        {
          reqId: requestId,
          client: resolved.client,
          method,
          path: served.route.path,
          statusCode: res.statusCode,
          etag: resolved.etag,
        },
        'served from memory',
      );
    }
    return true;
  }

  const app = ((req: IncomingMessage, res: ServerResponse) => {
    let served = false;
    try {
      served = fastPath(req, res);
    } catch (err) {
      logger.error({ err }, 'fast path failed; falling back to the Express app');
    }
    if (served || res.headersSent) return;
    expressApp(req, res);
  }) as RefsyncApp;

  return Object.assign(app, {
    express: expressApp,
    responses,
    versions,
    metrics,
    listenForEvents,
    warmUp: reads.warmUp,
    async close() {
      versions.stopPeriodicCheck();
      subscription?.unsubscribe();
      stopReconnectRefresh?.();
    },
  });
}
