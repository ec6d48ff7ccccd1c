import { effectiveSince, parseSinceVersion } from '@nhp/refsync-domain';
import { badRequest, notAcceptable, unauthorized, type AppError } from '@nhp/shared-errors';
import type { DatasetRoute } from '../datasets';
import type {
  CachedResponse,
  ContentEncoding,
  ResponseStore,
  Selection,
} from '../responses/response-store';
import type { VersionTracker } from '../versions/version-tracker';
import { ifNoneMatchMatches } from './conditional';
import { queryParam } from './query';

const WWW_AUTHENTICATE = 'ApiKey realm="refsync-api", header="X-API-KEY"';

/**
 * What a dataset request comes to before anything is written or read from storage:
 * - `refused`: `error` says why (401, 406, 400); the Express route throws it.
 * - `unnegotiated`: a header value content negotiation has not seen yet (the fast path leaves
 *   it to Express, which negotiates and remembers it; see refsync-api's NegotiationMemo).
 * - `not-modified`: If-None-Match matches `etag` at the version in memory: answer 304.
 * - `cached`: `response` is in the cache: write it.
 * - `miss`: neither; `version` is the one in memory (undefined before the first read), and the
 *   body must be computed (the Express route calls computeMiss, which reads the stored version
 *   first).
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

/** What the resolver reads of a request itself; the key check (a port) may read more of it. */
export interface DatasetRequest {
  readonly headers: { readonly 'if-none-match'?: string };
}

/**
 * `url` is the request target as received (path and query); `acceptsJson` and `encoding` come
 * from the negotiation memo (fast path: undefined when not negotiated yet) or from Express (the
 * route). Never throws, never touches storage.
 */
export type ResolveDatasetRequest<Req extends DatasetRequest> = (
  req: Req,
  route: DatasetRoute,
  url: string,
  acceptsJson: boolean | undefined,
  encoding: ContentEncoding | null | undefined,
) => Resolution;

export interface DatasetRequestPorts<Req extends DatasetRequest> {
  /** The client name of the request's API key, undefined for a missing, malformed or unknown one. */
  authenticate(req: Req): string | undefined;
  responses: ResponseStore;
  versions: VersionTracker;
}

/**
 * The one decision of a dataset request, shared by the fast path and the Express route, so that
 * the key check, sinceVersion parsing, ETag and If-None-Match are written once. The order is the
 * order of the answers a client gets: 401 before 406 before 400, then 304, then the body.
 */
export function datasetRequestResolver<Req extends DatasetRequest>(
  ports: DatasetRequestPorts<Req>,
): ResolveDatasetRequest<Req> {
  const { authenticate, responses, versions } = ports;
  return (req, route, url, acceptsJson, encoding) => {
    const client = authenticate(req);
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

    const version = versions.current();
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
  };
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
