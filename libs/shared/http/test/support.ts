import type { Express } from 'express';
import { createLogger, type Logger } from '@nhp/shared-logger';
import { statusText } from '@nhp/shared-errors';
import {
  clientMessage,
  createHttpApp,
  type CreateHttpAppOptions,
  type ErrorFormatter,
} from '../src';

/** A neutral error body for the shared lib's own tests: each app brings its real one. */
export const plainFormatter: ErrorFormatter = (err) => ({
  status: err.status,
  contentType: 'application/json',
  body: {
    code: err.code,
    message: err.expose ? err.message : 'An unexpected error occurred',
    category: err.category,
  },
});

/**
 * A generic RFC 9457 body for the shared lib's own tests of problem+json apps (refsync's real
 * formatter lives in @nhp/refsync-http, which shared code may not import).
 */
export const problemJsonFormatter: ErrorFormatter = (err, req) => ({
  status: err.status,
  contentType: 'application/problem+json',
  body: {
    type: 'about:blank',
    title: statusText(err.status),
    status: err.status,
    detail: clientMessage(err),
    instance: req.originalUrl.split('?')[0] || '/',
    code: err.code,
    ...(err.expose && err.details !== undefined ? { errors: err.details } : {}),
  },
});

export interface LogCapture {
  logger: Logger;
  lines: () => Record<string, unknown>[];
  text: () => string;
}

/** A real service logger (with its redaction) writing to memory. */
export function captureLogs(level = 'debug'): LogCapture {
  const chunks: string[] = [];
  const logger = createLogger({
    name: 'test',
    level,
    destination: { write: (chunk: string) => void chunks.push(chunk) },
  });
  const text = () => chunks.join('');
  return {
    logger,
    text,
    lines: () =>
      text()
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export function buildApp(
  options: Partial<CreateHttpAppOptions> & Pick<CreateHttpAppOptions, 'errorFormatter' | 'routes'>,
): { app: Express; logs: LogCapture } {
  const logs = captureLogs();
  return { app: createHttpApp({ logger: logs.logger, ...options }), logs };
}

/** Reads a dotted path out of a parsed log line. */
export function at(line: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], line);
}

/** pino-http logs the request line once the response has finished; give it that moment. */
export const settle = () => new Promise((resolve) => setImmediate(resolve));
