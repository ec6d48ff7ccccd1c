import { AppError } from '@nhp/shared-errors';
import { DATABASE_UNAVAILABLE, toAppError } from '@nhp/shared-persistence';

/**
 * Codes of the AppErrors this library throws, besides the driver translations of
 * @nhp/shared-persistence (DATABASE_UNAVAILABLE 503, DUPLICATE_KEY 409, DATABASE_ERROR 500).
 * Callers branch with `err instanceof AppError && err.code === REFSYNC_VERSION_CONFLICT`.
 */
export const REFSYNC_VERSION_CONFLICT = 'REFSYNC_VERSION_CONFLICT';
export const REFSYNC_STAGING_REJECTED = 'REFSYNC_STAGING_REJECTED';

/** `details` of a REFSYNC_VERSION_CONFLICT. */
export interface VersionConflictDetails {
  expectedVersion: number;
  actualVersion: number | undefined;
}

/** `details` of a REFSYNC_STAGING_REJECTED: the items it is about (may be empty). */
export interface StagingRejectedDetails {
  itemIds: string[];
}

/**
 * The committed version is not the one the caller expected: another writer committed meanwhile,
 * or a reader fixed a version that two runs have staged past. Operational: read the version again
 * (a reader) or recover() and start over (a writer). Not exposed: the versions are internal.
 */
export function versionConflict(
  expectedVersion: number,
  actualVersion: number | undefined,
  message?: string,
): AppError {
  const details: VersionConflictDetails = { expectedVersion, actualVersion };
  return new AppError({
    code: REFSYNC_VERSION_CONFLICT,
    status: 409,
    category: 'conflict',
    message:
      message ??
      `refsync state is at version ${actualVersion ?? 'unknown'}, expected ${expectedVersion}; ` +
        'another writer committed or the change set is stale (run recover() and start over)',
    details,
    expose: false,
  });
}

/**
 * A change set cannot be staged as given: a programming or protocol error of the caller (a
 * repeated item, a run not recovered, a second writer the lease should have kept out).
 */
export function stagingRejected(message: string, itemIds: string[] = []): AppError {
  const details: StagingRejectedDetails = { itemIds };
  return new AppError({
    code: REFSYNC_STAGING_REJECTED,
    status: 500,
    category: 'internal',
    operational: false,
    message,
    details,
  });
}

/** What a client is told while the database is away; Retry-After says when to try again. */
const UNAVAILABLE_MESSAGE = 'The data store cannot be reached; retry later';
const RETRY_AFTER_SECONDS = '5';

/**
 * refsync's one decoration of the driver-error translation (`toAppError` of
 * @nhp/shared-persistence decides which driver error is which AppError; this only rewords one of
 * them): the 503 DATABASE_UNAVAILABLE carries a message safe to show and a Retry-After hint,
 * because refsync-api's clients (machines polling for new versions) can do nothing but retry, and
 * its problem details show exposed messages. privacy-api answers the same 503 without them, so
 * the shared translation stays neutral. Every refsync repository applies it through
 * `translated(operation, refsyncStorageError)`. An AppError passes through unchanged, except an
 * unexposed DATABASE_UNAVAILABLE (one `toAppError` made further down), which is reworded the same
 * way.
 */
export function refsyncStorageError(err: unknown): AppError {
  const translated = toAppError(err);
  if (translated.code !== DATABASE_UNAVAILABLE || translated.expose) return translated;
  return databaseUnavailable(translated.cause ?? err);
}

/**
 * The 503 of refsyncStorageError, also thrown without a driver error: by the read repository while
 * the connection is known to be down, and by refsync-api when it gives up on a version conflict.
 */
export function databaseUnavailable(cause?: unknown): AppError {
  return new AppError({
    code: DATABASE_UNAVAILABLE,
    status: 503,
    category: 'unavailable',
    message: UNAVAILABLE_MESSAGE,
    expose: true,
    headers: { 'Retry-After': RETRY_AFTER_SECONDS },
    cause,
  });
}
