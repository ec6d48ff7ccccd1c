import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestIssuer, type CreateTestIssuerOptions, type TestIssuer } from './test-issuer';

export interface TrustedIssuer {
  issuer: TestIssuer;
  /** PRIVACY_AUTH_ISSUER and PRIVACY_AUTH_JWKS_FILE, for a privacy-api process's environment. */
  env: Record<string, string>;
  /** Removes the JWKS file. */
  dispose(): Promise<void>;
}

/**
 * A test issuer and the environment that makes a privacy-api process trust it: its public keys
 * in a JWKS file of their own, as an operator configures an issuer without a reachable JWKS URL.
 */
export async function trustedIssuer(options?: CreateTestIssuerOptions): Promise<TrustedIssuer> {
  const issuer = await createTestIssuer(options);
  const dir = await mkdtemp(join(tmpdir(), 'nhp-jwks-'));
  const file = join(dir, 'jwks.json');
  await writeFile(file, JSON.stringify(issuer.jwks));
  return {
    issuer,
    env: { PRIVACY_AUTH_ISSUER: issuer.issuer, PRIVACY_AUTH_JWKS_FILE: file },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}
