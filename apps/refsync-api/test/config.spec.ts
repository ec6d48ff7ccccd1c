import { ConfigError, parseEnv } from '@nhp/shared-config';
import { sha256Hex } from '../src/auth/api-keys';
import { refsyncApiEnvSchema, resolveApiKeys } from '../src/config';

describe('refsync-api config', () => {
  it('when nothing is set, then the documented defaults apply and the development key is used', () => {
    const config = parseEnv(refsyncApiEnvSchema, {});
    expect(config).toMatchObject({
      REFSYNC_API_PORT: 3002,
      REFSYNC_API_HOST: '0.0.0.0',
      REFSYNC_VERSION_CHECK_INTERVAL_MS: 30_000,
      REFSYNC_API_KEYS: [],
    });
    expect(resolveApiKeys(config)).toMatchObject({
      usingLocalDevKey: true,
      keys: [{ client: 'local-dev' }],
    });
  });

  it('when production has no keys, then start-up fails naming REFSYNC_API_KEYS', () => {
    expect(() => parseEnv(refsyncApiEnvSchema, { NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => parseEnv(refsyncApiEnvSchema, { NODE_ENV: 'production' })).toThrow(
      /REFSYNC_API_KEYS: required in production/,
    );
  });

  it('when production has keys, then only they are accepted', () => {
    const config = parseEnv(refsyncApiEnvSchema, {
      NODE_ENV: 'production',
      REFSYNC_API_KEYS: `acme:${sha256Hex('secret')}`,
    });
    expect(resolveApiKeys(config)).toMatchObject({
      usingLocalDevKey: false,
      keys: [{ client: 'acme' }],
    });
  });

  it('when an entry is malformed, then the error names the variable and the entry, not the value', () => {
    let message = '';
    try {
      parseEnv(refsyncApiEnvSchema, {
        REFSYNC_API_KEYS: 'acme:not-a-hash',
        REFSYNC_CACHE_MAX_BYTES: '12',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'REFSYNC_API_KEYS: entry 1: expected <client name>:<sha256 hex of the key>',
    );
    expect(message).toContain('REFSYNC_CACHE_MAX_BYTES');
    expect(message).not.toContain('not-a-hash');
  });

  it('when the check interval is given with a unit, then it is read as a duration', () => {
    expect(
      parseEnv(refsyncApiEnvSchema, { REFSYNC_VERSION_CHECK_INTERVAL_MS: '5s' })
        .REFSYNC_VERSION_CHECK_INTERVAL_MS,
    ).toBe(5000);
  });
});
