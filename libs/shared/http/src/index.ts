export {
  AppError,
  badRequest,
  conflict,
  defaultCategory,
  forbidden,
  internalError,
  isAppError,
  methodNotAllowed,
  notAcceptable,
  notFound,
  payloadTooLarge,
  serviceUnavailable,
  statusText,
  unauthorized,
  unsupportedMediaType,
  type AppErrorExtras,
  type AppErrorOptions,
  type DefaultErrorCategory,
} from './app-error';
export {
  createProblemDetailsFormatter,
  privacyErrorCategory,
  privacyErrorFormatter,
  problemDetailsFormatter,
  PRIVACY_ERROR_CATEGORIES,
  type ErrorFormatter,
  type FormattedError,
  type PrivacyErrorCategory,
  type PrivacyErrorResponse,
  type ProblemDetails,
  type ProblemDetailsOptions,
} from './error-formatters';
export {
  createHttpApp,
  JSON_MEDIA_TYPES,
  REQUEST_ID_HEADER,
  requestIdFrom,
  toClientError,
  type CreateHttpAppOptions,
} from './create-http-app';
export { allowedMethods } from './allowed-methods';
export {
  validate,
  VALIDATION_FAILED,
  type RequestSchemas,
  type ValidatedInput,
  type ValidationIssue,
} from './validate';
export { closeServer, listen, serverPort } from './server';
