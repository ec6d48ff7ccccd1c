import { AppError } from '@nhp/shared-errors';
import { duplicateKeyInfo } from './duplicate-key';

/** Error codes the data layer answers with when it translates a driver error. */
export const DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE';
export const DUPLICATE_KEY_CONFLICT = 'DUPLICATE_KEY';
export const DATABASE_ERROR = 'DATABASE_ERROR';

/**
 * Driver error classes (mongodb and mongoose) that mean "the database cannot be reached now": the
 * server selection gave up, the pool was cleared or closed, the socket broke, or mongoose's command
 * buffer timed out while disconnected. Matched by name because the classes come from two packages
 * whose instances cross realms in tests and bundles.
 */
const UNREACHABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoPoolClearedError',
  'MongoTopologyClosedError',
  'MongooseServerSelectionError',
  'DisconnectedError',
]);

/**
 * Socket errors that mean the connection to the server is gone. A server that ends a connection
 * during a clean stop makes a write fail with EPIPE ("This socket has been ended by the other
 * party"), which can surface unwrapped or as the cause of a driver error.
 */
const SOCKET_GONE_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'ENOTCONN']);

/**
 * Server error codes that mean the server is going away or is not the primary any more, so the
 * write never happened there and a retry elsewhere (or later) is the answer: the driver's own
 * "node is shutting down" and "not writable primary" codes (ShutdownInProgress,
 * InterruptedAtShutdown, InterruptedDueToReplStateChange, PrimarySteppedDown, NotWritablePrimary,
 * NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary) and the network ones a server reports
 * (HostUnreachable, HostNotFound, NetworkTimeout, SocketException). They arrive as a command's
 * code or as a statement's code among a bulk write's write errors.
 */
const UNREACHABLE_CODES = new Set([91, 11600, 11602, 189, 10107, 13435, 13436, 6, 7, 89, 9001]);

function isUnreachable(err: Error): boolean {
  // Breadth-first over what an error carries: its `cause`, a MongoServerError's `errorResponse`
  // (a MongoBulkWriteError made of a driver error, e.g. a closed connection, keeps that error
  // only there: its own name is MongoBulkWriteError) and a bulk write's `writeErrors`.
  const queue: unknown[] = [err];
  for (let seen = 0; seen < queue.length && seen < 20; seen++) {
    const e = queue[seen];
    if (typeof e !== 'object' || e === null) continue;
    const fields = e as {
      name?: unknown;
      message?: unknown;
      errorLabels?: unknown;
      code?: unknown;
      cause?: unknown;
      errorResponse?: unknown;
      writeErrors?: unknown;
    };
    if (typeof fields.name === 'string' && UNREACHABLE_NAMES.has(fields.name)) return true;
    const labels = fields.errorLabels;
    if (Array.isArray(labels) && labels.includes('ResetPool')) return true;
    const code = fields.code;
    if (typeof code === 'string' && SOCKET_GONE_CODES.has(code)) return true;
    if (typeof code === 'number' && UNREACHABLE_CODES.has(code)) return true;
    // mongoose: "Operation `x.find()` buffering timed out after 10000ms" while disconnected.
    if (
      fields.name === 'MongooseError' &&
      typeof fields.message === 'string' &&
      /buffering timed out/.test(fields.message)
    )
      return true;
    if (fields.cause !== undefined) queue.push(fields.cause);
    if (fields.errorResponse instanceof Error) queue.push(fields.errorResponse);
    // One WriteError or several (MongoBulkWriteError), or a Map of them (client bulk write).
    const writeErrors = fields.writeErrors;
    if (Array.isArray(writeErrors)) queue.push(...(writeErrors as unknown[]));
    else if (writeErrors instanceof Map) queue.push(...(writeErrors.values() as Iterable<unknown>));
    else if (typeof writeErrors === 'object' && writeErrors !== null) queue.push(writeErrors);
  }
  return false;
}

/**
 * Translates whatever the driver threw into the project's error type, where it arises (inside
 * data-access), so nothing above inspects driver classes:
 * - the database cannot be reached → 503 `DATABASE_UNAVAILABLE` (operational: retry later);
 * - a duplicate key → 409 `DUPLICATE_KEY` with the key in `details` (not exposed: the key may hold
 *   personal data; repositories that expect a duplicate map it to their own error first);
 * - anything else → 500 `DATABASE_ERROR`, a programmer error (a bad query, a bug).
 * An AppError passes through unchanged.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const cause = err;
  if (err instanceof Error && isUnreachable(err)) {
    return new AppError({
      code: DATABASE_UNAVAILABLE,
      status: 503,
      category: 'unavailable',
      message: 'The database cannot be reached',
      cause,
    });
  }
  const duplicate = duplicateKeyInfo(err);
  if (duplicate) {
    return new AppError({
      code: DUPLICATE_KEY_CONFLICT,
      status: 409,
      category: 'conflict',
      message: 'A record with the same key exists',
      details: { keyPattern: duplicate.keyPattern },
      expose: false,
      cause,
    });
  }
  return new AppError({
    code: DATABASE_ERROR,
    status: 500,
    category: 'internal',
    message: 'The database failed to carry out an operation',
    cause,
  });
}

/**
 * Runs a data-layer operation and rethrows whatever it throws as an AppError: `toAppError`, the one
 * translation, unless the caller passes a decoration of it (a service whose clients are told of an
 * unreachable database in words of their own, as refsync's are).
 */
export async function translated<T>(
  operation: () => Promise<T>,
  translate: (err: unknown) => AppError = toAppError,
): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw translate(err);
  }
}
