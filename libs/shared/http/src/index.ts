export {
  clientMessage,
  type ErrorContext,
  type ErrorFormatter,
  type FormattedError,
} from './error-formatters';
export { createHttpApp, type CreateHttpAppOptions } from './create-http-app';
export {
  JSON_MEDIA_TYPES,
  jsonBodyReader,
  jsonBodyReaderOutsideExpress,
  jsonBodyRefusal,
  type BodyLimit,
  type JsonBodyOutcome,
} from './body';
export { toClientError } from './client-errors';
export {
  largeBodyGate,
  type LargeBodyGate,
  type LargeBodyGateStats,
  type LargeBodyOptions,
} from './large-body-gate';
export { REQUEST_ID_HEADER, requestIdFrom } from './request-id';
export {
  LOGGED_REQUEST_HEADERS,
  MAX_LOGGED_VALUE_LENGTH,
  requestLineWriter,
  type LoggedRequest,
} from './request-log';
export { allowedMethods } from './allowed-methods';
export {
  validate,
  VALIDATION_FAILED,
  type RequestSchemas,
  type ValidatedInput,
  type ValidationIssue,
} from './validate';
export {
  closeServer,
  listen,
  serverPort,
  type HttpServerLimits,
  type ListenOptions,
} from './server';
export { renderApiDocsPage, type ApiDocsPageOptions, type ApiDocument } from './api-docs-page';
