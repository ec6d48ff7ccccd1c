import type { AppError, ErrorCategory } from '@nhp/shared-errors';
import { clientMessage, type ErrorFormatter } from '@nhp/shared-http';

/** ErrorResponse.errorCategory, as the interface enumerates it. */
export const PRIVACY_ERROR_CATEGORIES = [
  'Unknown',
  'SessionExpired',
  'ClientValidationError',
  'ServerValidationError',
  'DataMappingError',
  'EndpointIsDown',
  'ConfigError',
  'EndpointUnknownError',
  'Critical',
] as const;
export type PrivacyErrorCategory = (typeof PRIVACY_ERROR_CATEGORIES)[number];

export interface PrivacyErrorResponse {
  code: string | null;
  message: string | null;
  errorCategory: PrivacyErrorCategory;
}

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

/** privacy-api's error body: ErrorResponse, always with all three fields. */
export const privacyErrorFormatter: ErrorFormatter = (err) => {
  const body: PrivacyErrorResponse = {
    code: err.code,
    message: clientMessage(err),
    errorCategory: privacyErrorCategory(err),
  };
  return { status: err.status, contentType: 'application/json', body };
};
