import { z } from 'zod';

/**
 * Zod building blocks for environment variables. Every value in `process.env` is a string, so each
 * block parses the string itself and, when it cannot, says what it expected and what it got: the
 * message ends up in the one-line start-up error of `parseEnv`.
 */

const MAX_ECHO = 40;

/** Quotes a raw value for an error message, shortened so a pasted blob does not flood the line. */
function echo(raw: string): string {
  const shown = raw.length > MAX_ECHO ? `${raw.slice(0, MAX_ECHO)}…` : raw;
  return JSON.stringify(shown);
}

/** A string variable whose missing value reads "required" rather than zod's type jargon. */
const envString = () =>
  z.string({ error: (issue) => (issue.input === undefined ? 'required' : 'expected a string') });

/**
 * Builds a schema from a string parser. `parse` returns undefined when the text is not acceptable;
 * `expectation` completes "expected …". `secret` values are never echoed back.
 */
function fromString<T>(parse: (raw: string) => T | undefined, expectation: string, secret = false) {
  return envString().transform((raw, ctx): T => {
    const value = parse(raw.trim());
    if (value === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: secret ? `expected ${expectation}` : `expected ${expectation}, got ${echo(raw)}`,
      });
      return z.NEVER;
    }
    return value;
  });
}

function parseInteger(raw: string, min: number, max: number): number | undefined {
  if (!/^[+-]?\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
}

export interface EnvIntOptions {
  min?: number;
  max?: number;
  default?: number;
}

/** An integer, optionally bounded; with `default` the variable may be unset. */
export function envInt(options: EnvIntOptions = {}) {
  const min = options.min ?? Number.MIN_SAFE_INTEGER;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  const range =
    options.min !== undefined && options.max !== undefined
      ? ` ${min}-${max}`
      : options.min !== undefined
        ? ` >= ${min}`
        : options.max !== undefined
          ? ` <= ${max}`
          : '';
  const schema = fromString((raw) => parseInteger(raw, min, max), `integer${range}`);
  return options.default === undefined ? schema : schema.default(options.default);
}

/** A TCP port (1-65535). Port 0 ("any free port") is for tests, which pass ports in code. */
export function envPort(defaultPort?: number) {
  return envInt({ min: 1, max: 65535, default: defaultPort });
}

const TRUE_WORDS = new Set(['true', '1']);
const FALSE_WORDS = new Set(['false', '0']);

/** A boolean written as true/false/1/0 (case-insensitive). "yes" or "" are rejected, not guessed. */
export function envBool(defaultValue?: boolean) {
  const schema = fromString((raw) => {
    const word = raw.toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    return undefined;
  }, 'true, false, 1 or 0');
  return defaultValue === undefined ? schema : schema.default(defaultValue);
}

export interface EnvUrlOptions {
  /** Allowed schemes without the colon, e.g. ['mongodb', 'mongodb+srv']. */
  protocols?: readonly string[];
  default?: string;
}

/**
 * An absolute URL, kept as the string the operator wrote (drivers take strings). The value is never
 * echoed in the error: connection URLs carry credentials.
 */
export function envUrl(options: EnvUrlOptions = {}) {
  const protocols = options.protocols;
  const expectation = protocols?.length
    ? `a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}`
    : 'an absolute URL';
  const schema = fromString(
    (raw) => {
      if (!URL.canParse(raw)) return undefined;
      const scheme = new URL(raw).protocol.slice(0, -1);
      return protocols && !protocols.includes(scheme) ? undefined : raw;
    },
    expectation,
    true,
  );
  return options.default === undefined ? schema : schema.default(options.default);
}

/**
 * One URL or a comma-separated list of them (a cluster's seed servers, as NATS clients take them),
 * each checked like `envUrl`; kept as the string the operator wrote.
 */
export function envUrlList(options: EnvUrlOptions = {}) {
  const protocols = options.protocols;
  const expectation = `one or more comma-separated ${
    protocols?.length
      ? `URLs starting with ${protocols.map((p) => `${p}://`).join(' or ')}`
      : 'URLs'
  }`;
  const schema = fromString(
    (raw) => {
      const urls = raw.split(',').map((u) => u.trim());
      const ok = urls.every((u) => {
        if (!URL.canParse(u)) return false;
        const scheme = new URL(u).protocol.slice(0, -1);
        return !protocols || protocols.includes(scheme);
      });
      return ok ? urls.join(',') : undefined;
    },
    expectation,
    true,
  );
  return options.default === undefined ? schema : schema.default(options.default);
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses "1500", "1500ms", "10s", "2m" or "1h" to milliseconds; undefined when it is none of these. */
export function parseDurationMs(raw: string): number | undefined {
  const match = /^(\d+)\s*(ms|s|m|h)?$/.exec(raw.trim().toLowerCase());
  if (!match) return undefined;
  const value = Number(match[1]) * DURATION_UNITS[match[2] ?? 'ms'];
  return Number.isSafeInteger(value) ? value : undefined;
}

/** A duration in milliseconds: a bare integer is milliseconds; ms, s, m and h suffixes are accepted. */
export function envDurationMs(defaultMs?: number) {
  const schema = fromString(parseDurationMs, 'a duration such as 1500, 1500ms, 10s, 2m or 1h');
  return defaultMs === undefined ? schema : schema.default(defaultMs);
}

/** The write concern every write of record uses: `w`, the journal flag and an optional time limit. */
export interface MongoWriteConcern {
  /** `majority` or a number of members (at least 1). */
  w: number | 'majority';
  /** Acknowledged only once the write is in the on-disk journal. */
  journal: boolean;
  /** How long to wait for the members before answering a write concern error (0: no limit). */
  wtimeoutMS?: number;
}

/**
 * `MONGO_WRITE_CONCERN`: comma-separated `key=value` pairs, `w` (majority or a number >= 1),
 * `j` (true/false) and `wtimeoutMS` (a duration); a first item without `=` is `w`. `w` is
 * `majority` and `j` true unless given. `w=0` (unacknowledged) is refused: an answer to a client
 * must mean the write is durable.
 */
export function parseWriteConcern(raw: string): MongoWriteConcern | undefined {
  const concern: MongoWriteConcern = { w: 'majority', journal: true };
  const seen = new Set<string>();
  for (const [i, item] of raw.split(',').entries()) {
    const part = item.trim();
    const eq = part.indexOf('=');
    const key = eq === -1 ? (i === 0 ? 'w' : '') : part.slice(0, eq).trim();
    const value = eq === -1 ? part : part.slice(eq + 1).trim();
    if (!value || seen.has(key)) return undefined;
    seen.add(key);
    if (key === 'w') {
      if (/^\d+$/.test(value)) {
        const n = Number(value);
        if (n < 1 || n > 50) return undefined;
        concern.w = n;
      } else if (value === 'majority') concern.w = value;
      else return undefined;
    } else if (key === 'j') {
      const word = value.toLowerCase();
      if (!TRUE_WORDS.has(word) && !FALSE_WORDS.has(word)) return undefined;
      concern.journal = TRUE_WORDS.has(word);
    } else if (key === 'wtimeoutMS') {
      const ms = parseDurationMs(value);
      if (ms === undefined || ms < 0) return undefined;
      concern.wtimeoutMS = ms;
    } else return undefined;
  }
  return concern;
}

/** MONGO_WRITE_CONCERN (see parseWriteConcern); the default is `majority` with the journal. */
export function envWriteConcern() {
  return fromString(
    parseWriteConcern,
    'w=majority|<n>[,j=true|false][,wtimeoutMS=<duration>]',
  ).default({ w: 'majority', journal: true });
}

/** An enum whose error lists the allowed values (zod's default message does too, but less plainly). */
function envEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, {
    error: (issue) =>
      issue.input === undefined
        ? 'required'
        : `expected one of ${values.join(', ')}, got ${echo(String(issue.input))}`,
  });
}

export const NODE_ENVS = ['development', 'test', 'production'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

/** NODE_ENV: development, test or production; unset means development. */
export const nodeEnvSchema = envEnum(NODE_ENVS).default('development');

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A pino log level (no default: `commonEnvShape` sets info). */
export const logLevelSchema = envEnum(LOG_LEVELS);
