import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Cron } from 'croner';
import { z } from 'zod';
import { commonEnvShape, envDurationMs, envInt, envPort } from '@nhp/shared-config';
import { parseHeaderLine } from '@nhp/refsync-sources';

/** The repository root: relative file URLs are resolved against it. */
export const REPO_ROOT = resolve(__dirname, '../../..');

/** Outside production, with no token configured, POST /sync accepts this one (said in the start log). */
export const LOCAL_ADMIN_TOKEN = 'local-admin-token';

/**
 * The upstream variables. Required in every environment: the importer has no built-in upstream, so
 * a deployment that forgot them refuses to start instead of importing something else. The dev stack
 * (`npm start`) and docker compose pass the bundled sample data explicitly.
 */
export const SOURCE_VARIABLES = [
  'REFSYNC_SOURCE_TREATMENT_GROUP',
  'REFSYNC_SOURCE_REIMBURSEMENT_GROUP',
] as const;

/**
 * An upstream URL: file:// or http(s)://. `file://./x` and `file:./x` are relative to the repository
 * root (what .env.example and the dev stack use); they become absolute file URLs here. Not echoed
 * in errors, since an http URL may carry credentials.
 */
function envUpstreamUrl() {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return undefined; // reported as missing below, with both names
      const value = raw.trim();
      const relative = /^file:(?:\/\/)?(\.{1,2}\/.*)$/.exec(value);
      if (relative) {
        return pathToFileURL(resolve(REPO_ROOT, decodeURIComponent(relative[1] ?? ''))).href;
      }
      if (!URL.canParse(value) || !['file:', 'http:', 'https:'].includes(new URL(value).protocol)) {
        ctx.addIssue({ code: 'custom', message: 'expected a file://, http:// or https:// URL' });
        return z.NEVER;
      }
      return value;
    });
}

export const importerEnvSchema = z
  .object({
    ...commonEnvShape,
    REFSYNC_IMPORTER_PORT: envPort(3003),
    REFSYNC_IMPORTER_HOST: z.string().default('0.0.0.0'),
    REFSYNC_SOURCE_TREATMENT_GROUP: envUpstreamUrl(),
    REFSYNC_SOURCE_REIMBURSEMENT_GROUP: envUpstreamUrl(),
    /** "Name: value", sent to http(s) sources. Secret: never logged, never echoed in errors. */
    REFSYNC_SOURCE_AUTH_HEADER: z
      .string()
      .optional()
      .transform((raw, ctx) => {
        if (raw === undefined) return undefined;
        try {
          return parseHeaderLine(raw);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      }),
    REFSYNC_SOURCE_TIMEOUT_MS: envDurationMs(30_000),
    REFSYNC_SOURCE_RETRIES: envInt({ min: 0, max: 20, default: 3 }),
    REFSYNC_MAX_DELETE_SHARE: z
      .string()
      .default('0.2')
      .transform((raw, ctx) => {
        const value = Number(raw.trim());
        if (!/^\d*\.?\d+$/.test(raw.trim()) || !(value >= 0 && value <= 1)) {
          ctx.addIssue({
            code: 'custom',
            message: `expected a share between 0 and 1 (e.g. 0.2), got ${JSON.stringify(raw)}`,
          });
          return z.NEVER;
        }
        return value;
      }),
    REFSYNC_SCHEDULE: z.string().default('0 2 * * *'),
    REFSYNC_TIMEZONE: z
      .string()
      .default('Europe/Oslo')
      .refine(isTimeZone, { message: 'expected an IANA time zone such as Europe/Oslo' }),
    REFSYNC_IMPORTER_ADMIN_TOKEN: z.string().min(16, 'expected at least 16 characters').optional(),
    REFSYNC_LEASE_TTL_MS: envDurationMs(60_000).refine((ms) => ms >= 3000, 'expected at least 3s'),
    /** How often pending outbox events are retried while the worker runs. */
    REFSYNC_PUBLISH_INTERVAL_MS: envDurationMs(15_000).refine(
      (ms) => ms >= 100,
      'expected at least 100ms',
    ),
    /**
     * How long `--once` keeps trying to publish its event after the commit (NATS down or still
     * connecting). After it the command exits 5; the event stays in the outbox and the worker or
     * the next run publishes it.
     */
    REFSYNC_ONCE_PUBLISH_TIMEOUT_MS: envDurationMs(30_000),
  })
  .superRefine((env, ctx) => {
    const missing = SOURCE_VARIABLES.filter((name) => env[name] === undefined);
    for (const name of missing) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `required (${SOURCE_VARIABLES.join(' and ')} name the upstream files or URLs, file:// or http(s)://; the importer has no built-in upstream${env.NODE_ENV === 'production' ? '' : ', npm start passes the bundled sample data'})`,
      });
    }
    try {
      new Cron(env.REFSYNC_SCHEDULE, { timezone: env.REFSYNC_TIMEZONE, paused: true }).stop();
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        path: ['REFSYNC_SCHEDULE'],
        message: `expected a cron expression such as "0 2 * * *" (${(err as Error).message})`,
      });
    }
    if (env.NODE_ENV === 'production' && env.REFSYNC_IMPORTER_ADMIN_TOKEN === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['REFSYNC_IMPORTER_ADMIN_TOKEN'],
        message: 'required in production (POST /sync must not accept the development token)',
      });
    }
  })
  // Both sources are set once the refinement passed: say so in the type.
  .transform((env) => env as typeof env & Record<(typeof SOURCE_VARIABLES)[number], string>);

export type ImporterConfig = z.infer<typeof importerEnvSchema>;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The admin token in force, and whether it is the development default. */
export function adminToken(config: Pick<ImporterConfig, 'REFSYNC_IMPORTER_ADMIN_TOKEN'>): {
  token: string;
  isDefault: boolean;
} {
  return config.REFSYNC_IMPORTER_ADMIN_TOKEN !== undefined
    ? { token: config.REFSYNC_IMPORTER_ADMIN_TOKEN, isDefault: false }
    : { token: LOCAL_ADMIN_TOKEN, isDefault: true };
}
