import { isAppError } from '@nhp/shared-errors';
import type { Logger } from '@nhp/shared-logger';

/** What the policy needs of a Shutdown: a graceful stop that ends in a non-zero exit. */
export interface FailingShutdown {
  fail(reason: string): Promise<void>;
}

/** The part of `process` the policy listens on (an EventEmitter in tests). */
export interface ProcessEvents {
  on(event: 'uncaughtException', listener: (err: unknown, origin: string) => void): unknown;
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  off(event: 'uncaughtException', listener: (err: unknown, origin: string) => void): unknown;
  off(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
}

export interface ProcessErrorPolicyOptions {
  logger: Logger;
  shutdown: FailingShutdown;
  /** Default: the real `process`. */
  events?: ProcessEvents;
}

/**
 * The operational-versus-programmer error policy for errors that escaped every handler (a throw in
 * a timer or an event listener, a promise nobody awaited):
 *
 * - `unhandledRejection` of an operational AppError (bad input, a dependency that is down): an
 *   expected condition someone forgot to await. Logged at error; the process goes on, since a
 *   rejected promise unwinds nothing but its own chain.
 * - `unhandledRejection` of anything else (a programmer error, or a value nobody can vouch for),
 *   and every `uncaughtException` (the throw unwound a stack half-way through its work; Node's
 *   documentation says the process is not safe to resume): logged at fatal, then the graceful
 *   shutdown runs within its deadline and the process exits non-zero.
 *
 * Errors Express caught for a request never get here: the HTTP error handler answers 500 and
 * logs them (see the README). Returns a function that removes the listeners again.
 */
export function handleProcessErrors(options: ProcessErrorPolicyOptions): () => void {
  const { logger, shutdown } = options;
  const events = options.events ?? process;

  const fatal = (origin: 'uncaughtException' | 'unhandledRejection', err: unknown) => {
    try {
      logger.fatal(
        { err: loggableError(err), origin },
        origin === 'uncaughtException'
          ? 'uncaught exception; shutting down'
          : 'unhandled rejection of a programmer error; shutting down',
      );
    } catch {
      // A logger that throws must not keep the process from stopping.
    }
    void shutdown.fail(origin);
  };

  const onUncaughtException = (err: unknown) => fatal('uncaughtException', err);
  const onUnhandledRejection = (reason: unknown) => {
    if (isAppError(reason) && reason.operational) {
      logger.error(
        { err: loggableError(reason), code: reason.code, origin: 'unhandledRejection' },
        'unhandled rejection of an operational error; carrying on',
      );
      return;
    }
    fatal('unhandledRejection', reason);
  };

  events.on('uncaughtException', onUncaughtException);
  events.on('unhandledRejection', onUnhandledRejection);
  return () => {
    events.off('uncaughtException', onUncaughtException);
    events.off('unhandledRejection', onUnhandledRejection);
  };
}

const REDACTED = '[Redacted]';
/**
 * What an error's text may carry that a log line must not: an 11-digit national identity number
 * (fødselsnummer, D-number), a JWT, the credential after an HTTP auth scheme, a URL's userinfo
 * and `name=value` credentials. The logger redacts sensitive keys, not free text; a message or a
 * stack is free text, written by code nobody reviewed for this (a driver quoting a filter).
 */
const SENSITIVE_TEXT: Array<[RegExp, string]> = [
  [/(?<!\d)\d{11}(?!\d)/g, REDACTED],
  [/\beyJ[\w-]*\.[\w-]*\.[\w-]*/g, REDACTED],
  [/\b(Bearer|DPoP|Basic)\s+[^\s,;"']+/gi, `$1 ${REDACTED}`],
  [/(\/\/)[^/\s:@]+:[^/\s@]+@/g, `$1${REDACTED}@`],
  [
    /\b(password|passwd|secret|token|api[-_]?key|x-api-key)(["']?\s*[:=]\s*["']?)[^\s,;"'&]+/gi,
    `$1$2${REDACTED}`,
  ],
];

function scrubbed(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SENSITIVE_TEXT) out = out.replace(pattern, replacement);
  return out;
}

/**
 * An error as the fatal line shows it: a copy with its type (prototype), code, message and stack
 * (scrubbed of identity numbers and credentials) and its causes, and nothing else of it: its other
 * properties (a request, a document, a config) are exactly what a crash must not dump. The copy is
 * an Error, so the logger's error serializer shows it as usual. A rejection with something that is
 * not an Error is named by its type (a primitive with its scrubbed value), never dumped.
 */
export function loggableError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) {
    const type = err === null ? 'null' : typeof err;
    return type === 'object' || type === 'function'
      ? { rejectedWith: type }
      : { rejectedWith: type, value: scrubbed(String(err)).slice(0, 500) };
  }
  const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
  const own = (value: unknown, enumerable = false): PropertyDescriptor => ({
    value,
    enumerable,
    writable: true,
    configurable: true,
  });
  Object.defineProperties(copy, {
    name: own(err.name),
    message: own(scrubbed(err.message)),
    stack: own(err.stack === undefined ? undefined : scrubbed(err.stack)),
  });
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') {
    Object.defineProperty(copy, 'code', own(code, true));
  }
  if (err.cause !== undefined && depth < 3) {
    Object.defineProperty(copy, 'cause', own(loggableError(err.cause, depth + 1)));
  }
  return copy;
}
