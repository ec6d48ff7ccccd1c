export { createLogger, type CreateLoggerOptions } from './logger';
export { REDACTED, redactDeep, redactPaths, sensitiveKeys } from './redact';
export type { DestinationStream, Level, Logger } from 'pino';
