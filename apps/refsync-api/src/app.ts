import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  SYNC_COMPLETED_EVENT_TYPE,
  SYNC_COMPLETED_SUBJECT,
  syncCompletedEventDataSchema,
} from '@nhp/refsync-contracts';
import { databaseUnavailable, REFSYNC_VERSION_CONFLICT } from '@nhp/refsync-data-access';
import { effectiveSince, parseSinceVersion } from '@nhp/refsync-domain';
import { problemDetailsFormatter } from '@nhp/refsync-http';
import { createHttpApp, REQUEST_ID_HEADER, requestIdFrom } from '@nhp/shared-http';
import { AppError, badRequest, notAcceptable, unauthorized } from '@nhp/shared-errors';
import type { Logger } from '@nhp/shared-logger';
import {
  defineEvent,
  subscribeCloudEvents,
  type NatsConnection,
  type Subscription,
} from '@nhp/shared-messaging';
import type { Express, Request, Response, Router } from 'express';
import { createApiKeyVerifier, type ApiKeyEntry } from './auth/api-keys';
import { authenticate } from './auth/connection-auth';
import { DATASET_ROUTES, routeByPath, type DatasetReader, type DatasetRoute } from './datasets';
import { ifNoneMatchMatches } from './http/conditional';
import { NegotiationMemo } from './http/negotiation';
import { pathOf, queryParam } from './http/query';
import { renderDocsPage } from './openapi/docs-page';
import { openApiDocument } from './openapi/openapi-document';
import {
  ResponseStore,
  type CachedResponse,
  type ContentEncoding,
  type Selection,
} from './responses/response-store';
import { writeCached } from './responses/write-cached';
import { VersionTracker } from './versions/version-tracker';

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
}

/** A Node request listener (for http.createServer, listen() or supertest) with its parts. */
export interface RefsyncApp {
  (req: IncomingMessage, res: ServerResponse): void;
  /** The Express app behind the fast path: everything that is not a cached read. */
  readonly express: Express;
  readonly responses: ResponseStore;
  readonly versions: VersionTracker;
  /** Reads the stored version so the first request is served from memory; never rejects. */
  warmUp(): Promise<number | undefined>;
  /** Stops the periodic check and the event subscription. */
  close(): Promise<void>;
}

const API_KEY_HEADER = 'x-api-key';
/** Reads of the version and the items before a miss gives up with 503 (two syncs in a row won). */
const MAX_VERSION_ATTEMPTS = 3;
const WWW_AUTHENTICATE = 'ApiKey realm="refsync-api", header="X-API-KEY"';

/** The event as refsync-importer publishes it; `source` matters only when building. */
const syncCompletedEvent = defineEvent({
  type: SYNC_COMPLETED_EVENT_TYPE,
  source: '/nhp/refsync-importer',
  dataSchema: syncCompletedEventDataSchema,
});

function notModifiedHeaders(etag: string): Record<string, string> {
  return { ETag: etag, 'Cache-Control': 'no-cache', Vary: 'Accept-Encoding' };
}

function notModifiedHeaderList(etag: string, requestId: string): string[] {
  return [
    'ETag',
    etag,
    'Cache-Control',
    'no-cache',
    'Vary',
    'Accept-Encoding',
    REQUEST_ID_HEADER,
    requestId,
  ];
}

function isVersionConflict(err: unknown): boolean {
  return err instanceof AppError && err.code === REFSYNC_VERSION_CONFLICT;
}

/**
 * Builds refsync-api. Requests for the dataset paths first meet a fast path that answers from
 * memory (a cached body or a 304) without Express, a database read, serialisation or compression;
 * anything it cannot answer so (a cache miss, an error, a header value not negotiated before)
 * falls through to the Express app, which is the reference behaviour for every request.
 */
export function createApp(deps: RefsyncAppDeps): RefsyncApp {
  const { logger } = deps;
  const keys = createApiKeyVerifier(deps.apiKeys);
  const memo = new NegotiationMemo();
  const responses = new ResponseStore({
    reader: deps.reader,
    maxBytes: deps.cacheMaxBytes,
    logger,
    recentVersions: deps.recentVersionsCached,
    identityMaxBytes: deps.identityMaxBytes,
  });
  const versions = new VersionTracker({
    read: () => deps.reader.currentVersion(),
    logger,
    onChange(version, previous, reason) {
      const dropped = responses.setCurrentVersion(version);
      logger.info({ version, previous, reason, droppedCacheEntries: dropped }, 'data version');
    },
  });
  versions.startPeriodicCheck(deps.versionCheckIntervalMs);

  let subscription: Subscription | undefined;
  if (deps.nats) {
    subscription = subscribeCloudEvents(
      deps.nats,
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
  }

  const docsOpenApi = openApiDocument();
  const openApiBytes = Buffer.from(JSON.stringify(docsOpenApi), 'utf8');

  // The reader rejects with AppErrors only (driver errors are translated in data-access), so
  // whatever it throws is formatted as it is: anything else is a bug and becomes a 500.
  const refreshedVersion = () => versions.refresh('request');
  const obtain = (selection: Selection, version: number, encoding: ContentEncoding) =>
    responses.obtain(selection, version, encoding);

  /** The Express route of one dataset path: the reference behaviour, rules 1-7 included. */
  function datasetHandler(route: DatasetRoute) {
    return async (req: Request, res: Response): Promise<void> => {
      const client = authenticate(req, keys, API_KEY_HEADER);
      if (client === undefined) {
        throw unauthorized('UNAUTHORIZED', 'A valid X-API-KEY header is required', undefined, {
          headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
        });
      }
      req.log = req.log.child({ client });

      const negotiated = memo.negotiate(req);
      if (!negotiated.acceptsJson) {
        throw notAcceptable(
          'NOT_ACCEPTABLE',
          'This resource is only available as application/json',
        );
      }
      if (negotiated.encoding === null) {
        throw notAcceptable(
          'NO_ACCEPTABLE_ENCODING',
          'None of the offered content codings (br, gzip, identity) is acceptable',
        );
      }
      const encoding = negotiated.encoding;

      const parsed = parseSinceVersion(queryParam(req.originalUrl, route.sinceParam));
      if (!parsed.ok) {
        throw badRequest('INVALID_SINCE_VERSION', `${route.sinceParam} ${parsed.reason}`, [
          { path: `query.${route.sinceParam}`, message: parsed.reason },
        ]);
      }
      const selection: Selection = {
        dataset: route.dataset,
        spelling: route.spelling,
        since: effectiveSince(parsed.value),
      };

      const ifNoneMatch = req.headers['if-none-match'];
      const notModified = (etag: string) =>
        ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag);

      let version = versions.current() ?? (await refreshedVersion());
      let etag = responses.etag(selection, version, encoding);
      let response: CachedResponse | undefined;
      let source: 'cache' | 'computed' | 'not-modified' = 'not-modified';
      if (!notModified(etag)) {
        response = responses.peek(etag);
        source = 'cache';
        if (!response) {
          // A miss reads the stored version first: the body is computed at the committed version
          // even when an event was missed, and a newer version drops the stale entries. Storage
          // refuses a version that two syncs have left behind; then read the version again.
          for (let attempt = 1; ; attempt++) {
            version = await refreshedVersion();
            etag = responses.etag(selection, version, encoding);
            if (notModified(etag)) {
              source = 'not-modified';
              break;
            }
            try {
              response = await obtain(selection, version, encoding);
              source = 'computed';
              break;
            } catch (err) {
              if (!isVersionConflict(err)) throw err;
              if (attempt === MAX_VERSION_ATTEMPTS) throw databaseUnavailable(err);
              req.log.info(
                { version, attempt },
                'data version moved on while reading; reading again',
              );
            }
          }
        }
      }
      // pino-http's request line cannot carry the client name (bound above), so this line does.
      req.log.info({ etag, source }, 'dataset request');
      if (!response) {
        res.writeHead(304, notModifiedHeaders(etag));
        res.end();
        return;
      }
      writeCached(res, response);
    };
  }

  const expressApp = createHttpApp({
    logger,
    errorFormatter: problemDetailsFormatter,
    health: deps.health,
    routes(app) {
      for (const route of DATASET_ROUTES) app.get(route.path, datasetHandler(route));
      // Schemas only, no data: readable without a key (see README, "Authentication").
      app.get('/openapi.json', (_req, res) => {
        res.type('application/json').send(openApiBytes);
      });
      app.get('/docs', (req, res) => {
        const origin = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
        res.type('html').send(renderDocsPage(docsOpenApi, origin));
      });
    },
  });

  // pino's isLevelEnabled walks the logger's prototype chain: measured head to head, asking it on
  // every cached read cost 2.7% of their throughput. The answer is kept and follows level changes.
  let debugEnabled = logger.isLevelEnabled('debug');
  logger.on('level-change', () => {
    debugEnabled = logger.isLevelEnabled('debug');
  });

  /** Answers from memory or returns false; never throws (anything unusual goes to Express). */
  function fastPath(req: IncomingMessage, res: ServerResponse): boolean {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '/';
    // Without a query string the URL is the path: one lookup, no scan for '?'.
    const route = routeByPath.get(url) ?? routeByPath.get(pathOf(url));
    if (!route) return false;
    const version = versions.current();
    if (version === undefined) return false;
    const headers = req.headers;
    if (memo.acceptsJson(headers.accept) !== true) return false;
    const encoding = memo.encodingFor(headers['accept-encoding']);
    if (!encoding) return false;
    const client = authenticate(req, keys, API_KEY_HEADER);
    if (client === undefined) return false;
    let since: number | undefined;
    if (url.length !== route.path.length) {
      const parsed = parseSinceVersion(queryParam(url, route.sinceParam));
      if (!parsed.ok) return false;
      since = effectiveSince(parsed.value);
    }

    const selection: Selection = { dataset: route.dataset, spelling: route.spelling, since };
    const etag = responses.etag(selection, version, encoding);
    const ifNoneMatch = headers['if-none-match'];
    const notModified = ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag);
    const cached = notModified ? undefined : responses.peek(etag);
    if (!notModified && !cached) return false;

    // All headers in one writeHead call with a flat list: a separate setHeader would send every
    // header through setHeader's validation again.
    const requestId = requestIdFrom(headers['x-request-id']);
    if (cached) {
      writeCached(res, cached, { name: REQUEST_ID_HEADER, value: requestId });
    } else {
      res.writeHead(304, notModifiedHeaderList(etag, requestId));
      res.end();
    }
    // Debug: at info, one line per cached read would cost more than serving it (see README).
    if (debugEnabled) {
      logger.debug(
        { reqId: requestId, client, method, path: route.path, statusCode: res.statusCode, etag },
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
    if (!served && !res.headersSent) expressApp(req, res);
  }) as RefsyncApp;

  return Object.assign(app, {
    express: expressApp,
    responses,
    versions,
    async warmUp() {
      try {
        return await versions.refresh('start');
      } catch (err) {
        logger.warn(
          { err },
          'could not read the data version yet; the first request will try again',
        );
        return undefined;
      }
    },
    async close() {
      versions.stopPeriodicCheck();
      subscription?.unsubscribe();
    },
  });
}
