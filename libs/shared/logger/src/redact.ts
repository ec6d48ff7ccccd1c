/**
 * Field names whose values must never reach a log line: credentials (headers, tokens, keys) and
 * anything that carries a national identity number. Header names are lower-case because Node
 * lower-cases incoming header names.
 */
export const sensitiveKeys: readonly string[] = [
  // Credentials and session material.
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'dpop',
  'token',
  'accessToken',
  'refreshToken',
  'idToken',
  'apiKey',
  'password',
  'clientSecret',
  // National identity numbers (fødselsnummer / D-nummer) under the names the interfaces use.
  'innbyggerFnr',
  'fnr',
  'annenFnr',
  'fodselsnummer',
  'foedselsnummer',
  'nationalIdentityNumber',
  'pid',
];

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `name` or `["x-api-key"]`: the path segment syntax pino's redaction understands. */
function segment(key: string): string {
  return IDENTIFIER.test(key) ? `.${key}` : `["${key}"]`;
}

/**
 * pino redaction matches explicit paths (used for child bindings and for what serializers produce;
 * `redactDeep` covers each call's own object at any depth), not "any depth", so each key is listed at the depths where
 * our log lines carry data: top level (`logger.info({ fnr })`), one level down (`{ user: { fnr } }`),
 * two levels down (`req.headers.authorization`, `req.body.fnr`, `res.headers["set-cookie"]`), and
 * two more inside a request body (`req.body.relasjoner.fnr`, `req.body.items[3].fnr`). Deeper
 * nesting is not redacted: log a narrower object instead.
 */
export const redactPaths: string[] = sensitiveKeys.flatMap((key) => {
  const tail = segment(key);
  return [
    tail.startsWith('.') ? tail.slice(1) : tail,
    `*${tail}`,
    `*.*${tail}`,
    `req.body.*${tail}`,
    `req.body.*.*${tail}`,
  ];
});

export const REDACTED = '[Redacted]';

const SENSITIVE = new Set(sensitiveKeys.map((key) => key.toLowerCase()));
/** Deeper than this, a logged object is left as it is (a cycle, or a structure no one should log). */
const MAX_DEPTH = 32;

/** Plain data is walked; class instances (requests, sockets, streams) are left to serializers. */
function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A copy of an error with some own properties replaced; prototype, message, stack and cause kept. */
function errorWith(err: Error, changes: Map<PropertyKey, unknown>): Error {
  const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
  for (const key of Reflect.ownKeys(err)) {
    const found = Object.getOwnPropertyDescriptor(err, key);
    if (!found) continue;
    // An accessor may read state only the original has (`stack` is one since Node 22): its value
    // is copied, not the accessor.
    const descriptor: PropertyDescriptor =
      found.get || found.set
        ? {
            value: Reflect.get(err, key),
            writable: true,
            enumerable: !!found.enumerable,
            configurable: true,
          }
        : found;
    Object.defineProperty(
      copy,
      key,
      changes.has(key) ? { ...descriptor, value: changes.get(key) } : descriptor,
    );
  }
  return copy;
}

function redactValue(value: unknown, depth: number, path: Set<object>): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || path.has(value)) {
    return value;
  }
  path.add(value);
  try {
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item, i) => {
        const redacted = redactValue(item, depth + 1, path);
        if (redacted !== item) (copy ??= [...value])[i] = redacted;
      });
      return copy ?? value;
    }
    if (value instanceof Error) {
      const changes = new Map<PropertyKey, unknown>();
      const keys: PropertyKey[] = [...Object.keys(value), 'cause'];
      for (const key of keys) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        const item = (value as unknown as Record<PropertyKey, unknown>)[key];
        const redacted =
          typeof key === 'string' && SENSITIVE.has(key.toLowerCase())
            ? REDACTED
            : redactValue(item, depth + 1, path);
        if (redacted !== item) changes.set(key, redacted);
      }
      return changes.size ? errorWith(value, changes) : value;
    }
    if (!isPlainObject(value)) return value;
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      const item = value[key];
      const redacted = SENSITIVE.has(key.toLowerCase())
        ? REDACTED
        : redactValue(item, depth + 1, path);
      if (redacted !== item) (copy ??= { ...value })[key] = redacted;
    }
    return copy ?? value;
  } finally {
    path.delete(value);
  }
}

/**
 * The object of a log call with every sensitive key replaced, at any depth, in plain objects,
 * arrays and errors (their enumerable properties and cause). Copy on write: an object without
 * sensitive keys is returned as it is, and the caller's object is never changed. Class instances
 * (a request, a socket) are not walked: their serializers reduce them to plain data, which the
 * path-based redaction covers.
 *
 * pino's own redaction matches explicit paths only (no "any depth"), so this walk is hand-written;
 * it runs as pino's `formatters.log`, on the object each call passes.
 */
export function redactDeep<T>(value: T): T {
  return redactValue(value, 0, new Set()) as T;
}

/**
 * A URL parameter whose name says it carries a credential: any name holding one of these words,
 * in any case (`access_token`, `api_key`, `X-Api-KEY`, `client_secret`, `SAMLAssertion`, `code`,
 * `authCode`, ...). A rule rather than a list of names: a client may send a credential under any
 * name, and a harmless parameter that the rule takes too only loses its value in the log.
 */
const CREDENTIAL_NAME = /token|key|secret|passw|assertion|code|auth|credential|session|signature/i;

export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/**
 * Eleven digits standing alone (not part of a longer run of digits): a national identity number
 * (fødselsnummer or D-number) as it appears in a path segment, a query value or a name.
 */
const IDENTITY_NUMBER = /(?<!\d)\d{11}(?!\d)/g;

/** `text` with every 11-digit number replaced: for paths and query names and values. */
export function redactIdentityNumbers(text: string): string {
  return text.replace(IDENTITY_NUMBER, REDACTED);
}

/**
 * A parsed query string as a log line may show it: the value of every credential-named parameter
 * replaced, and identity numbers taken out of names and values (strings, or lists of them).
 */
export function redactQuery(query: Record<string, unknown>): Record<string, unknown> {
  const logged: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    logged[redactIdentityNumbers(name)] = isCredentialName(name)
      ? REDACTED
      : redactQueryValue(value);
  }
  return logged;
}

function redactQueryValue(value: unknown): unknown {
  if (typeof value === 'string') return redactIdentityNumbers(value);
  if (Array.isArray(value)) return value.map(redactQueryValue);
  if (typeof value === 'object' && value !== null) {
    return redactQuery(value as Record<string, unknown>);
  }
  return value;
}
