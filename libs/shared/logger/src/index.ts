export { createLogger, type CreateLoggerOptions } from './logger';
export {
  isCredentialName,
  REDACTED,
  redactDeep,
  redactIdentityNumbers,
  redactPaths,
  redactQuery,
  sensitiveKeys,
} from './redact';
export type { DestinationStream, Level, Logger } from 'pino';
