import { join } from 'node:path';
import type { Logger } from '@nhp/shared-logger';
import { defaultDevDataDir, DEV_ISSUER, DEV_JWKS_FILE, ensureDevKey } from './dev-key';
import type { PrivacyAuthOptions } from './privacy-auth';

/** The configuration variables privacy-api declares for authentication. */
export interface PrivacyAuthConfig {
  NODE_ENV: string;
  PRIVACY_AUTH_ISSUER?: string | undefined;
  PRIVACY_AUTH_AUDIENCE: string;
  PRIVACY_AUTH_JWKS_URL?: string | undefined;
  PRIVACY_AUTH_JWKS_FILE?: string | undefined;
}

export interface AuthOptionsFromConfigExtras {
  logger?: Logger;
  /** Where the development key lives; default DEV_DATA_DIR or .data. */
  devDataDir?: string;
}

/**
 * PrivacyAuthOptions from privacy-api's configuration.
 * - Issuer and exactly one key source (URL or file) given: they are used.
 * - None of the three given, outside production: the development key (created in the data folder
 *   when missing) with the development issuer, and a warning in the log.
 * - Anything else (production without them, an issuer without a key source or the reverse, both
 *   a URL and a file): an Error naming the variables, for the app to report at start-up.
 */
export async function privacyAuthOptionsFromConfig(
  config: PrivacyAuthConfig,
  extras: AuthOptionsFromConfigExtras = {},
): Promise<PrivacyAuthOptions> {
  const issuer = config.PRIVACY_AUTH_ISSUER;
  const url = config.PRIVACY_AUTH_JWKS_URL;
  const file = config.PRIVACY_AUTH_JWKS_FILE;
  const common = { audience: config.PRIVACY_AUTH_AUDIENCE, logger: extras.logger };

  if (url && file) {
    throw new Error('Set PRIVACY_AUTH_JWKS_URL or PRIVACY_AUTH_JWKS_FILE, not both');
  }
  if (issuer && (url || file)) {
    return { ...common, issuer, jwks: url ? { url } : { file: file as string } };
  }
  if (config.NODE_ENV === 'production') {
    throw new Error(
      'In production PRIVACY_AUTH_ISSUER and one of PRIVACY_AUTH_JWKS_URL / PRIVACY_AUTH_JWKS_FILE are required',
    );
  }
  if (issuer || url || file) {
    throw new Error(
      issuer
        ? 'PRIVACY_AUTH_ISSUER is set but no key source: set PRIVACY_AUTH_JWKS_URL or PRIVACY_AUTH_JWKS_FILE (or none of the three for the development key)'
        : 'A JWKS source is set but PRIVACY_AUTH_ISSUER is not: set it (or none of the three for the development key)',
    );
  }
  const dataDir = extras.devDataDir ?? defaultDevDataDir();
  const devKey = await ensureDevKey(dataDir);
  extras.logger?.warn(
    { issuer: DEV_ISSUER, jwksFile: join(dataDir, DEV_JWKS_FILE) },
    'no PRIVACY_AUTH_ISSUER / JWKS configured: trusting the development key (never in production)',
  );
  return { ...common, issuer: devKey.issuer, jwks: { file: devKey.jwksFile } };
}
