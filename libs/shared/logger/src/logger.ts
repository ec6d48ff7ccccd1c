import { hostname } from 'node:os';
import pino, { type DestinationStream, type Logger } from 'pino';
import { activeTraceFields, type TraceFields } from '@nhp/shared-tracing';
import { REDACTED, redactDeep, redactPaths } from './redact';

export interface CreateLoggerOptions {
  /** Service name, on every line. */
  name: string;
  /** pino level; default info. */
  level?: string;
  /** Human-readable output through pino-pretty, for a developer's terminal only. */
  pretty?: boolean;
  /** Where lines go; default stdout. Tests pass a stream they read. */
  destination?: DestinationStream;
}

type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

/**
 * pino-pretty is a dev dependency, absent from production images, so it is required only when
 * asked for. It runs in this thread (not as a pino transport worker) and writes synchronously, so
 * the last lines before a shutdown's process.exit are not lost.
 */
function loadPretty(): PrettyFactory | Error {
  try {
    const mod = require('pino-pretty') as PrettyFactory & { default?: PrettyFactory };
    return mod.default ?? mod;
  } catch (error) {
    return error as Error;
  }
}

/**
 * The service logger: JSON lines to stdout with credentials and national identity numbers
 * redacted: at any depth of each call's object (`redactDeep`), and at the listed paths of child
 * bindings and serializer output (`redactPaths`). pino's default `pid` binding is dropped because `pid` is also a field name we redact
 * (a person identifier), and in a container the process id says nothing anyway. While a span is
 * active (tracing on), each line carries its `trace_id` and `span_id` beside the request id.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  let destination = options.destination;
  let prettyUnavailable: Error | undefined;
  if (options.pretty && !destination) {
    const pretty = loadPretty();
    if (pretty instanceof Error) {
      prettyUnavailable = pretty;
    } else {
      destination = pretty({
        colorize: true,
        sync: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'hostname',
      });
    }
  }

  const logger = pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      base: { hostname: hostname() },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactPaths, censor: REDACTED },
      formatters: { log: (object) => redactDeep(object) },
      // Without an active span the line's own object is logged as it is (pino's default merge
      // would copy it into the mixin's object on every line).
      mixin: activeTraceFields,
      mixinMergeStrategy: (object, trace: TraceFields) =>
        trace.trace_id === undefined ? object : { ...trace, ...object },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );

  if (prettyUnavailable) {
    logger.warn(
      { reason: prettyUnavailable.message },
      'LOG_PRETTY is set but pino-pretty is not installed; logging JSON',
    );
  }
  return logger;
}
