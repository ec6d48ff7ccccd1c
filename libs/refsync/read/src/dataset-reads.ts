import type { DatasetReader, ReadLogger, VersionConflicts } from './ports';
import {
  datasetRequestResolver,
  matches,
  type DatasetRequest,
  type ResolveDatasetRequest,
} from './requests/dataset-requests';
import {
  ResponseStore,
  type CachedResponse,
  type ContentEncoding,
  type Selection,
} from './responses/response-store';
import { VersionTracker } from './versions/version-tracker';

/** Reads of the version and the items before a miss gives up (two syncs in a row won). */
export const MAX_VERSION_ATTEMPTS = 3;

export interface DatasetReadPorts<Req extends DatasetRequest> {
  /** The read side of storage (structurally createRefsyncReadRepository). */
  reader: DatasetReader;
  versionConflicts: VersionConflicts;
  /** The client name of a request's API key (see DatasetRequestPorts). */
  authenticate(req: Req): string | undefined;
  logger: ReadLogger;
  /** Byte bound of the response cache. */
  cacheMaxBytes: number;
  /** How many versions back a diff is still cached (default 30). */
  recentVersionsCached?: number;
  /** Identity bodies above this size are cached gzip-compressed and inflated when sent (8 MiB). */
  identityMaxBytes?: number;
}

/** What a miss comes to: the body at the stored version, or none when If-None-Match matches it. */
export interface MissOutcome {
  etag: string;
  /** undefined: If-None-Match matches the ETag at the stored version (answer 304). */
  response: CachedResponse | undefined;
}

export interface DatasetReads<Req extends DatasetRequest> {
  /** The one decision of a dataset request, from memory only (see datasetRequestResolver). */
  resolve: ResolveDatasetRequest<Req>;
  /**
   * A miss: reads the stored version first, so the body is computed at the committed version even
   * when an event was missed (a newer version drops the stale entries). Storage refuses a version
   * that two syncs have left behind; then the version is read again, up to MAX_VERSION_ATTEMPTS
   * times. Errors are storage's (503 at once while the database is known to be down).
   */
  computeMiss(
    selection: Selection,
    encoding: ContentEncoding,
    ifNoneMatch: string | undefined,
    log: Pick<ReadLogger, 'info'>,
  ): Promise<MissOutcome>;
  /** Reads the stored version so the first request is served from memory; never rejects. */
  warmUp(): Promise<number | undefined>;
  /** The response cache. */
  readonly responses: ResponseStore;
  /** The data version in memory, refreshed on events, periodically and on a miss. */
  readonly versions: VersionTracker;
}

/**
 * The read side of refsync-api: the response cache, the data version it serves, the decision of
 * each dataset request and the computation of a miss. A new version drops the cache entries of
 * every other version.
 */
export function createDatasetReads<Req extends DatasetRequest>(
  ports: DatasetReadPorts<Req>,
): DatasetReads<Req> {
  const { reader, versionConflicts, logger } = ports;
  const responses = new ResponseStore({
    reader,
    maxBytes: ports.cacheMaxBytes,
    logger,
    recentVersions: ports.recentVersionsCached,
    identityMaxBytes: ports.identityMaxBytes,
  });
  const versions = new VersionTracker({
    read: () => reader.currentVersion(),
    logger,
    onChange(version, previous, reason) {
      const dropped = responses.setCurrentVersion(version);
      logger.info({ version, previous, reason, droppedCacheEntries: dropped }, 'data version');
    },
  });
  const resolve = datasetRequestResolver({
    authenticate: ports.authenticate,
    responses,
    versions,
  });

  async function computeMiss(
    selection: Selection,
    encoding: ContentEncoding,
    ifNoneMatch: string | undefined,
    log: Pick<ReadLogger, 'info'>,
  ): Promise<MissOutcome> {
    for (let attempt = 1; ; attempt++) {
      const version = await versions.refresh('request');
      const etag = responses.etag(selection, version, encoding);
      if (matches(ifNoneMatch, etag)) return { etag, response: undefined };
      try {
        return { etag, response: await responses.obtain(selection, version, encoding) };
      } catch (err) {
        if (!versionConflicts.is(err)) throw err;
        if (attempt === MAX_VERSION_ATTEMPTS) throw versionConflicts.exhausted(err);
        log.info({ version, attempt }, 'data version moved on while reading; reading again');
      }
    }
  }

  async function warmUp(): Promise<number | undefined> {
    try {
      return await versions.refresh('start');
    } catch (err) {
      logger.warn({ err }, 'could not read the data version yet; the first request will try again');
      return undefined;
    }
  }

  return { resolve, computeMiss, warmUp, responses, versions };
}
