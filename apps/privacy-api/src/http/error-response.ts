import {
  isPrivacyCode,
  PRIVACY_CODES,
  privacyCodeForStatus,
  type ErrorResponse,
  type PrivacyErrorCategory,
} from '@nhp/privacy-contracts';
import type { AppError, ErrorCategory } from '@nhp/shared-errors';
import { DUPLICATE_KEY_CONFLICT } from '@nhp/shared-persistence';
import { clientMessage, type ErrorContext, type ErrorFormatter } from '@nhp/shared-http';
import { debugRequested } from './debug-header';

const CATEGORY: Record<ErrorCategory, PrivacyErrorCategory> = {
  validation: 'ClientValidationError',
  rule: 'ServerValidationError',
  authentication: 'ClientValidationError',
  'credentials-expired': 'SessionExpired',
  authorization: 'ClientValidationError',
  'not-found': 'ClientValidationError',
  method: 'ClientValidationError',
  conflict: 'ClientValidationError',
  'rate-limit': 'ClientValidationError',
  client: 'ClientValidationError',
  unavailable: 'EndpointIsDown',
  internal: 'Unknown',
};

/** The errorCategory of an error: the project's neutral category in the interface's words. */
export function privacyErrorCategory(err: AppError): PrivacyErrorCategory {
  return CATEGORY[err.category];
}

interface Mapped {
  status: number;
  code: string;
  category: PrivacyErrorCategory;
}

/** The catalogue's generic code of each client status the shared layers answer with. */
const CODE_OF_STATUS: Record<number, string> = {
  400: PRIVACY_CODES.validation,
  401: PRIVACY_CODES.unauthenticated,
  403: PRIVACY_CODES.refused,
  404: PRIVACY_CODES.notFound,
  405: PRIVACY_CODES.methodNotAllowed,
  413: PRIVACY_CODES.payloadTooLarge,
  415: PRIVACY_CODES.unsupportedMediaType,
};

const INTERNAL: Mapped = { status: 500, code: PRIVACY_CODES.internal, category: 'Unknown' };

/**
 * An error of the shared layers (shared-http, shared-persistence, shared-errors), numbered by its
 * status and neutral category, never by its code's spelling. A database that cannot be reached
 * is answered 500 EPVK-100503 EndpointIsDown: the interface lists 500, not 503, for every
 * operation. A status the catalogue does not list (408 or 431 from the HTTP parser) is kept, so
 * the client learns what to change, and numbered like the rest.
 */
function generic(err: AppError): Mapped {
  if (err.status >= 500) {
    return err.category === 'unavailable'
      ? { status: 500, code: PRIVACY_CODES.unavailable, category: 'EndpointIsDown' }
      : INTERNAL;
  }
  // Repositories map the duplicates they expect; one that escapes is a bug, not the client's.
  if (err.code === DUPLICATE_KEY_CONFLICT) return INTERNAL;
  // Every 400 is the client's request as sent, whatever category its thrower chose.
  const category = err.status === 400 ? 'ClientValidationError' : privacyErrorCategory(err);
  const code = CODE_OF_STATUS[err.status] ?? privacyCodeForStatus(err.status);
  return { status: err.status, code, category };
}

function mapped(err: AppError): Mapped {
  if (isPrivacyCode(err.code)) {
    return { status: err.status, code: err.code, category: privacyErrorCategory(err) };
  }
  return generic(err);
}

interface IssueLike {
  location?: unknown;
  path?: unknown;
  message?: unknown;
}

/** The keys zod names in an unknown-property issue ('Unrecognized keys: "a", "b"'). */
function unknownKeys(message: unknown): string[] {
  if (typeof message !== 'string' || !message.startsWith('Unrecognized key')) return [];
  return [...message.matchAll(/"([^"]*)"/g)].map((m) => m[1] as string);
}

/**
 * "body.relasjoner[0].definisjonGuid" for each validation issue, when the error carries them; an
 * unknown property is named by its own path ("body.farge"), not its object's.
 */
function validationPaths(err: AppError): string[] {
  if (!err.expose || !Array.isArray(err.details)) return [];
  return (err.details as IssueLike[])
    .filter((issue) => typeof issue?.location === 'string')
    .flatMap((issue) => {
      const base =
        typeof issue.path === 'string' && issue.path !== ''
          ? `${String(issue.location)}.${issue.path}`
          : String(issue.location);
      const keys = unknownKeys(issue.message);
      return keys.length > 0 ? keys.map((key) => `${base}.${key}`) : [base];
    });
}

function debugSuffix(err: AppError, req: ErrorContext): string {
  const parts: string[] = [];
  const paths = validationPaths(err);
  if (paths.length > 0) parts.push(`paths: ${[...new Set(paths)].join(', ')}`);
  if (typeof req.id === 'string') parts.push(`requestId: ${req.id}`);
  return parts.length > 0 ? ` [${parts.join('; ')}]` : '';
}

export interface PrivacyErrorFormatterOptions {
  /** Honour `X-hn-isdebug: true` (PRIVACY_ALLOW_DEBUG). */
  allowDebug: boolean;
}

/**
 * privacy-api's error body: ErrorResponse, always with all three fields, never a stack. The
 * status follows the catalogue (see generic); the message is the thrower's when it may be shown.
 * With `X-hn-isdebug: true` and debugging allowed, the message also names the request's invalid
 * fields and the request id.
 */
export function createPrivacyErrorFormatter(options: PrivacyErrorFormatterOptions): ErrorFormatter {
  return (err, req) => {
    const { status, code, category } = mapped(err);
    let message = clientMessage(err);
    if (options.allowDebug && debugRequested(req.headers)) message += debugSuffix(err, req);
    const body: ErrorResponse = { code, message, errorCategory: category };
    return { status, contentType: 'application/json', body };
  };
}

/** The formatter without debugging (errors raised where no configuration is at hand). */
export const privacyErrorFormatter: ErrorFormatter = createPrivacyErrorFormatter({
  allowDebug: false,
});
