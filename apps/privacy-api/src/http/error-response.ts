import type { ErrorResponse, PrivacyErrorCategory } from '@nhp/privacy-contracts';
import { PRIVACY_CODES } from '@nhp/privacy-domain';
import type { AppError, ErrorCategory } from '@nhp/shared-errors';
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

/**
 * Codes outside the EPVK catalogue for the two statuses the interface does not list (a path or a
 * method it does not serve). Same numbering scheme as the catalogue: 100 + the HTTP status.
 */
export const NOT_FOUND_CODE = 'EPVK-100404';
export const METHOD_NOT_ALLOWED_CODE = 'EPVK-100405';

interface Mapped {
  status: number;
  code: string;
  category: PrivacyErrorCategory;
}

/**
 * The generic codes of the shared layers (shared-http, shared-persistence, shared-errors) as the
 * decisions' catalogue spells them. A database that cannot be reached is answered 500
 * EPVK-100503 EndpointIsDown: the interface lists 500, not 503, for every operation.
 */
const GENERIC: Record<string, Mapped> = {
  VALIDATION_FAILED: {
    status: 400,
    code: PRIVACY_CODES.validation,
    category: 'ClientValidationError',
  },
  MALFORMED_JSON: {
    status: 400,
    code: PRIVACY_CODES.validation,
    category: 'ClientValidationError',
  },
  MALFORMED_PATH: {
    status: 400,
    code: PRIVACY_CODES.validation,
    category: 'ClientValidationError',
  },
  BAD_REQUEST: { status: 400, code: PRIVACY_CODES.validation, category: 'ClientValidationError' },
  MALFORMED_REQUEST: {
    status: 400,
    code: PRIVACY_CODES.validation,
    category: 'ClientValidationError',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    code: PRIVACY_CODES.payloadTooLarge,
    category: 'ClientValidationError',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    code: PRIVACY_CODES.unsupportedMediaType,
    category: 'ClientValidationError',
  },
  UNSUPPORTED_CONTENT_ENCODING: {
    status: 415,
    code: PRIVACY_CODES.unsupportedMediaType,
    category: 'ClientValidationError',
  },
  UNSUPPORTED_CHARSET: {
    status: 415,
    code: PRIVACY_CODES.unsupportedMediaType,
    category: 'ClientValidationError',
  },
  NOT_FOUND: { status: 404, code: NOT_FOUND_CODE, category: 'ClientValidationError' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    code: METHOD_NOT_ALLOWED_CODE,
    category: 'ClientValidationError',
  },
  DATABASE_UNAVAILABLE: {
    status: 500,
    code: PRIVACY_CODES.databaseUnavailable,
    category: 'EndpointIsDown',
  },
  DATABASE_ERROR: { status: 500, code: PRIVACY_CODES.internal, category: 'Unknown' },
  INTERNAL_ERROR: { status: 500, code: PRIVACY_CODES.internal, category: 'Unknown' },
  // Repositories map the duplicates they expect; one that escapes is a bug, not the client's.
  DUPLICATE_KEY: { status: 500, code: PRIVACY_CODES.internal, category: 'Unknown' },
};

/** Any other non-EPVK code, by status: never a code the catalogue does not know for it. */
function byStatus(err: AppError): Mapped {
  const category = privacyErrorCategory(err);
  if (err.status >= 500) {
    return err.category === 'unavailable'
      ? { status: 500, code: PRIVACY_CODES.databaseUnavailable, category: 'EndpointIsDown' }
      : { status: 500, code: PRIVACY_CODES.internal, category: 'Unknown' };
  }
  switch (err.status) {
    case 401:
      return { status: 401, code: PRIVACY_CODES.unauthenticated, category };
    case 403:
      return { status: 403, code: PRIVACY_CODES.refused, category };
    case 404:
      return { status: 404, code: NOT_FOUND_CODE, category };
    case 405:
      return { status: 405, code: METHOD_NOT_ALLOWED_CODE, category };
    case 413:
      return { status: 413, code: PRIVACY_CODES.payloadTooLarge, category };
    case 415:
      return { status: 415, code: PRIVACY_CODES.unsupportedMediaType, category };
    case 400:
      return { status: 400, code: PRIVACY_CODES.validation, category: 'ClientValidationError' };
    default:
      // A status the catalogue does not list (408 or 431 from the HTTP parser): kept, so the
      // client learns what to change, and numbered like the rest.
      return { status: err.status, code: `EPVK-100${err.status}`, category };
  }
}

function mapped(err: AppError): Mapped {
  if (err.code.startsWith('EPVK-')) {
    return { status: err.status, code: err.code, category: privacyErrorCategory(err) };
  }
  return GENERIC[err.code] ?? byStatus(err);
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
 * status follows the catalogue (see GENERIC); the message is the thrower's when it may be shown.
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
