import { z } from 'zod';

/** The environment did not satisfy the app's schema. `message` is one line naming every bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    /** One entry per problem: "VARIABLE: what is wrong". */
    readonly problems: readonly string[],
  ) {
    super(`Invalid environment: ${problems.join('; ')}`);
  }
}

/**
 * Unset and empty mean the same thing: `FOO=` in an env file or compose file should fall back to
 * the default rather than fail as "expected an integer, got """.
 */
function withoutEmptyValues(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== '') result[key] = value;
  }
  return result;
}

function describeIssue(issue: z.core.$ZodIssue, env: Record<string, string>): string {
  const variable = issue.path.map(String).join('.') || '(environment)';
  // A plain z.string() in an app schema says "expected string, received undefined"; say it plainly.
  const missing =
    issue.code === 'invalid_type' &&
    issue.path.length === 1 &&
    env[String(issue.path[0])] === undefined;
  return `${variable}: ${missing ? 'required' : issue.message}`;
}

/**
 * Parses the environment once, at start-up, against the app's schema. Throws a `ConfigError` that
 * names every bad or missing variable, so an operator fixes them all in one go.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const input = withoutEmptyValues(env);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => describeIssue(issue, input)));
}

/**
 * `parseEnv` for `main.ts`: a bad environment is an operator mistake, not a bug, so it prints the
 * one-line message to stderr (no stack trace) and exits 1.
 */
export function loadConfigOrExit<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  try {
    return parseEnv(schema, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return process.exit(1);
  }
}
