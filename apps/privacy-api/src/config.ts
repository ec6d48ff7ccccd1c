import { commonEnvShape, envBool, envInt, envPort } from '@nhp/shared-config';
import { z } from 'zod';

/**
 * privacy-api's environment; every variable is documented in .env.example and the app's README.
 * Booleans whose default depends on NODE_ENV are optional here and resolved by `resolve*` below.
 */
export const privacyApiConfigSchema = z.object({
  ...commonEnvShape,
  PRIVACY_API_PORT: envPort(3001),
  PRIVACY_API_HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * Set: /metrics is served on this port of its own (same host) and no longer on the API port,
   * so the proxy in front of the API need not block it. Unset (default): on the API port.
   */
  PRIVACY_API_METRICS_PORT: envPort().optional(),
  /** Mounts every route under this prefix too (gateway clients call /personvern/...). */
  PRIVACY_API_BASE_PATH: z
    .string()
    .default('')
    .refine((v) => v === '' || /^\/[A-Za-z0-9._~\-/]*[^/]$/.test(v), {
      message: 'expected "" or a path such as /personvern (leading slash, no trailing slash)',
    }),
  /** Synthetic test identity numbers (month + 80); default true outside production. */
  PRIVACY_ALLOW_SYNTHETIC_IDS: envBool().optional(),
  /** Honour X-hn-isdebug: true (validation paths and request id in messages); default true outside production. */
  PRIVACY_ALLOW_DEBUG: envBool().optional(),
  /** Entries per page of the active-citizens walk. */
  PRIVACY_PAGE_SIZE: envInt({ min: 1, max: 10_000, default: 1000 }),
  /**
   * How long definitions and grants are trusted from memory. Changes made anywhere reach every
   * instance by a NATS announcement at once; this bounds how stale an entry can be when an
   * announcement is lost (NATS down). 0: read the database every time.
   */
  PRIVACY_CACHE_TTL_MS: envInt({ min: 0, max: 3_600_000, default: 5000 }),
  /** Token issuer (`iss`); required in production. */
  PRIVACY_AUTH_ISSUER: z.string().min(1).optional(),
  /** Token audience (`aud`), also the prefix of the scopes. */
  PRIVACY_AUTH_AUDIENCE: z.string().min(1).default('nhn:helsenorge.eksternapi'),
  /** Where the issuer's signing keys are: a JWKS URL or a JWKS file (one of them in production). */
  PRIVACY_AUTH_JWKS_URL: z.url().optional(),
  PRIVACY_AUTH_JWKS_FILE: z.string().min(1).optional(),
  /**
   * Where DPoP proofs' jtis are remembered against replay: `memory` (this instance only: enough
   * for one instance) or `nats` (a JetStream key-value bucket every instance shares; while NATS is
   * down, DPoP requests are refused with EPVK-100503 rather than accepted unchecked).
   */
  PRIVACY_DPOP_REPLAY_STORE: z
    .enum(['memory', 'nats'], { error: 'expected memory or nats' })
    .default('memory'),
  /**
   * Bytes for the jtis of accepted DPoP proofs in this instance (16 a proof; at most 11/16 of the
   * table live): 8 MiB holds 360 000 live proofs, each DPoP key an eighth of them (README, "DPoP
   * replay table"). At least 64 KiB.
   */
  PRIVACY_DPOP_REPLAY_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(1024 * 1024 * 1024)
    .default(8 * 1024 * 1024),
});

export type PrivacyApiConfig = z.infer<typeof privacyApiConfigSchema>;

const outsideProduction = (config: Pick<PrivacyApiConfig, 'NODE_ENV'>) =>
  config.NODE_ENV !== 'production';

export function resolveAllowSyntheticIds(
  config: Pick<PrivacyApiConfig, 'NODE_ENV' | 'PRIVACY_ALLOW_SYNTHETIC_IDS'>,
): boolean {
  return config.PRIVACY_ALLOW_SYNTHETIC_IDS ?? outsideProduction(config);
}

export function resolveAllowDebug(
  config: Pick<PrivacyApiConfig, 'NODE_ENV' | 'PRIVACY_ALLOW_DEBUG'>,
): boolean {
  return config.PRIVACY_ALLOW_DEBUG ?? outsideProduction(config);
}
