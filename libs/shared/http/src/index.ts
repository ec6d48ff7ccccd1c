export {
  clientMessage,
  type ErrorContext,
  type ErrorFormatter,
  type FormattedError,
} from './error-formatters';
export {
  createHttpApp,
  JSON_MEDIA_TYPES,
  jsonBodyRefusal,
  LOGGED_REQUEST_HEADERS,
  MAX_LOGGED_VALUE_LENGTH,
  REQUEST_ID_HEADER,
  requestIdFrom,
  requestLineWriter,
  toClientError,
  type CreateHttpAppOptions,
  type LoggedRequest,
} from './create-http-app';
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
