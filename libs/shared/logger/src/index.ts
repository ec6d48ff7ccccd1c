export { createLogger, type CreateLoggerOptions } from './logger';
export { REDACTED, redactPaths, sensitiveKeys } from './redact';
export type { DestinationStream, Level, Logger } from 'pino';
