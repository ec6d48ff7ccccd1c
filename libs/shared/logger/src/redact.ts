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
 * pino redaction matches explicit paths, not "any depth", so each key is listed at the depths where
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
