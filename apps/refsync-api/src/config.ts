import { commonEnvShape, envDurationMs, envInt, envPort } from '@nhp/shared-config';
import { z } from 'zod';
import { localDevKeys, parseApiKeys, type ApiKeyEntry } from './auth/api-keys';

const MIB = 1024 * 1024;

/** The default fits the 100k-item benchmark dataset's full list in all three encodings. */
export const DEFAULT_CACHE_MAX_BYTES = 128 * MIB;

const apiKeysSchema = z
  .string()
  .optional()
  .transform((raw, ctx): ApiKeyEntry[] => {
    const parsed = parseApiKeys(raw);
    if (parsed.ok) return parsed.keys;
    for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  });

export const refsyncApiEnvSchema = z
  .object({
    ...commonEnvShape,
    REFSYNC_API_PORT: envPort(3002),
    REFSYNC_API_HOST: z.string().default('0.0.0.0'),
    /**
     * Set: /metrics is served on this port of its own (same host) and no longer on the API port,
     * so the proxy in front of the API need not block it. Unset (default): on the API port.
     */
    REFSYNC_API_METRICS_PORT: envPort().optional(),
    /** Comma-separated `<client name>:<sha256 hex of the key>`; see `npm run refsync-keys`. */
    REFSYNC_API_KEYS: apiKeysSchema,
    /** Upper bound of the response cache (serialised and compressed bodies), in bytes. */
    REFSYNC_CACHE_MAX_BYTES: envInt({ min: MIB, default: DEFAULT_CACHE_MAX_BYTES }),
    /** How often the stored current version is checked, in case a sync-completed event was missed. */
    REFSYNC_VERSION_CHECK_INTERVAL_MS: envDurationMs(30_000).pipe(z.number().min(100)),
    /**
     * How long a MongoDB operation waits for a reachable server before it fails (503). Short, so a
     * miss during an outage the driver has not noticed yet still answers within a second.
     */
    /** Deprecated alias of MONGO_SERVER_SELECTION_TIMEOUT_MS (wins when set). */
    REFSYNC_MONGO_SERVER_SELECTION_TIMEOUT_MS: envDurationMs().pipe(z.number().min(100)).optional(),
  })
  .check((ctx) => {
    if (ctx.value.NODE_ENV === 'production' && ctx.value.REFSYNC_API_KEYS.length === 0) {
      ctx.issues.push({
        code: 'custom',
        input: undefined,
        path: ['REFSYNC_API_KEYS'],
        message:
          'required in production: at least one <client name>:<sha256 hex> entry (generate one with npm run refsync-keys -- <client name>)',
      });
    }
  });

export type RefsyncApiConfig = z.infer<typeof refsyncApiEnvSchema>;

/**
 * The keys the service accepts. Outside production, with none configured, the well-known
 * development key is accepted (the start log says so); production never gets here without keys.
 */
export function resolveApiKeys(config: Pick<RefsyncApiConfig, 'NODE_ENV' | 'REFSYNC_API_KEYS'>): {
  keys: ApiKeyEntry[];
  usingLocalDevKey: boolean;
} {
  if (config.REFSYNC_API_KEYS.length > 0) {
    return { keys: config.REFSYNC_API_KEYS, usingLocalDevKey: false };
  }
  if (config.NODE_ENV === 'production') {
    throw new Error('REFSYNC_API_KEYS is required in production');
  }
  return { keys: localDevKeys(), usingLocalDevKey: true };
}
