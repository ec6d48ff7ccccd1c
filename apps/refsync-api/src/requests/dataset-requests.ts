import type { IncomingMessage } from 'node:http';
import { effectiveSince, parseSinceVersion } from '@nhp/refsync-domain';
import { badRequest, notAcceptable, unauthorized, type AppError } from '@nhp/shared-errors';
import type { ApiKeyVerifier } from '../auth/api-keys';
import { authenticate } from '../auth/connection-auth';
import type { DatasetRoute } from '../datasets';
import { ifNoneMatchMatches } from '../http/conditional';
import { queryParam } from '../http/query';
import type {
  CachedResponse,
  ContentEncoding,
  ResponseStore,
  Selection,
} from '../responses/response-store';
import type { VersionTracker } from '../versions/version-tracker';

export const API_KEY_HEADER = 'x-api-key';
const WWW_AUTHENTICATE = 'ApiKey realm="refsync-api", header="X-API-KEY"';

/**
 * What a dataset request comes to before anything is written or read from storage:
 * - `refused`: `error` says why (401, 406, 400); the Express route throws it.
 * - `unnegotiated`: a header value content negotiation has not seen yet (the fast path leaves
 *   it to Express, which negotiates and remembers it; see NegotiationMemo).
 * - `not-modified`: If-None-Match matches `etag` at the version in memory: answer 304.
 * - `cached`: `response` is in the cache: write it.
 * - `miss`: neither; `version` is the one in memory (undefined before the first read), and the
 *   body must be computed (the Express route does, reading the stored version first).
 */
export type Outcome = 'refused' | 'unnegotiated' | 'not-modified' | 'cached' | 'miss';

/** One class, one shape, whatever the outcome: the fast path allocates nothing else per request. */
export class Resolution {
  constructor(
    readonly outcome: Outcome,
    readonly client: string | undefined,
    readonly selection: Selection | undefined,
    readonly encoding: ContentEncoding | undefined,
    readonly version: number | undefined,
    readonly etag: string | undefined,
    readonly response: CachedResponse | undefined,
    readonly error: AppError | undefined,
  ) {}

  static refused(error: AppError, client?: string): Resolution {
    return new Resolution(
      'refused',
      client,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      error,
    );
  }
}

const UNNEGOTIATED = new Resolution(
  'unnegotiated',
  undefined,
  undefined,
  undefined,
  undefined,
  undefined,
  undefined,
  undefined,
);

export interface DatasetRequestsOptions {
  keys: ApiKeyVerifier;
  responses: ResponseStore;
  versions: VersionTracker;
}

/**
 * The one decision of a dataset request, shared by the fast path and the Express route, so that
 * the key check, sinceVersion parsing, ETag and If-None-Match are written once. The order is the
 * order of the answers a client gets: 401 before 406 before 400, then 304, then the body.
 */
export class DatasetRequests {
  constructor(private readonly options: DatasetRequestsOptions) {}

  /**
   * `url` is the request target as received (path and query); `acceptsJson` and `encoding` come
   * from the negotiation memo (fast path: undefined when not negotiated yet) or from Express (the
   * route). Never throws, never touches storage.
   */
  resolve(
    req: IncomingMessage,
    route: DatasetRoute,
    url: string,
    acceptsJson: boolean | undefined,
    encoding: ContentEncoding | null | undefined,
  ): Resolution {
    const client = authenticate(req, this.options.keys, API_KEY_HEADER);
    if (client === undefined) return Resolution.refused(unauthorizedError());
    if (acceptsJson === undefined || encoding === undefined) return UNNEGOTIATED;
    if (!acceptsJson) {
      return Resolution.refused(
        notAcceptable('NOT_ACCEPTABLE', 'This resource is only available as application/json'),
        client,
      );
    }
    if (encoding === null) {
      return Resolution.refused(
        notAcceptable(
          'NO_ACCEPTABLE_ENCODING',
          'None of the offered content codings (br, gzip, identity) is acceptable',
        ),
        client,
      );
    }

    // Without a query string the URL is the path: nothing to parse.
    let since: number | undefined;
    if (url.length !== route.path.length) {
      const parsed = parseSinceVersion(queryParam(url, route.sinceParam));
      if (!parsed.ok) {
        return Resolution.refused(
          badRequest('INVALID_SINCE_VERSION', `${route.sinceParam} ${parsed.reason}`, [
            { path: `query.${route.sinceParam}`, message: parsed.reason },
          ]),
          client,
        );
      }
      since = effectiveSince(parsed.value);
    }
    const selection: Selection = { dataset: route.dataset, spelling: route.spelling, since };

    const version = this.options.versions.current();
    if (version === undefined) {
      return new Resolution(
        'miss',
        client,
        selection,
        encoding,
        undefined,
        undefined,
        undefined,
        undefined,
      );
    }
    const { responses } = this.options;
    const etag = responses.etag(selection, version, encoding);
    if (matches(req.headers['if-none-match'], etag)) {
      return new Resolution(
        'not-modified',
        client,
        selection,
        encoding,
        version,
        etag,
        undefined,
        undefined,
      );
    }
    const response = responses.peek(etag);
    return new Resolution(
      response ? 'cached' : 'miss',
      client,
      selection,
      encoding,
      version,
      etag,
      response,
      undefined,
    );
  }
}

/** If-None-Match of a request against an ETag (see ifNoneMatchMatches). */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  return ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag);
}

function unauthorizedError(): AppError {
  return unauthorized('UNAUTHORIZED', 'A valid X-API-KEY header is required', undefined, {
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  });
}
