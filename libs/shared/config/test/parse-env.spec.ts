import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, commonEnvShape, envPort, parseEnv } from '../src';

const schema = z.object({ ...commonEnvShape, PORT: envPort(), API_KEY_SALT: z.string() });

describe('parseEnv', () => {
  it('when every variable is valid, then it returns typed, coerced values', () => {
    const config = parseEnv(schema, { PORT: '3001', API_KEY_SALT: 's', LOG_PRETTY: '1' });
    expect(config.PORT).toBe(3001);
    expect(config.LOG_PRETTY).toBe(true);
    expect(config.API_KEY_SALT).toBe('s');
  });

  it('when several variables are bad or missing, then one message names every one of them', () => {
    let error: unknown;
    try {
      parseEnv(schema, { PORT: 'abc', MONGO_URL: 'postgres://db', SHUTDOWN_TIMEOUT_MS: 'soon' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      'Invalid environment: ' +
        'MONGO_URL: expected a URL starting with mongodb:// or mongodb+srv://; ' +
        'SHUTDOWN_TIMEOUT_MS: expected a duration such as 1500, 1500ms, 10s, 2m or 1h, got "soon"; ' +
        'PORT: expected integer 1-65535, got "abc"; ' +
        'API_KEY_SALT: required',
    );
    expect((error as ConfigError).problems).toHaveLength(4);
  });

  it('when a variable is set to an empty string, then it counts as unset', () => {
    expect(() => parseEnv(schema, { PORT: '', API_KEY_SALT: 's' })).toThrow(
      'Invalid environment: PORT: required',
    );
    expect(parseEnv(schema, { PORT: '1', API_KEY_SALT: 's', LOG_LEVEL: '' }).LOG_LEVEL).toBe(
      'info',
    );
  });
});

describe('loadConfigOrExit', () => {
  const repoRoot = path.resolve(__dirname, '../../../..');
  const start = (env: Record<string, string>) =>
    spawnSync(
      path.join(repoRoot, 'node_modules/.bin/tsx'),
      [path.join(__dirname, 'fixtures/start-with-env.ts')],
      {
        cwd: repoRoot,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', ...env },
        timeout: 60_000,
      },
    );

  it('when the environment is bad, then the process exits 1 with one readable line and no stack trace', () => {
    const result = start({ APP_PORT: 'abc', NODE_ENV: 'prod' });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'Invalid environment: NODE_ENV: expected one of development, test, production, got "prod"; ' +
        'APP_PORT: expected integer 1-65535, got "abc"; API_KEY_SALT: required\n',
    );
  });

  it('when the environment is good, then the app goes on', () => {
    const result = start({ APP_PORT: '3009', API_KEY_SALT: 'x' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('started on 3009\n');
    expect(result.status).toBe(0);
  });
});
