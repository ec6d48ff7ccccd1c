import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { parseEnv } from '@nhp/shared-config';
import { adminToken, importerEnvSchema, LOCAL_ADMIN_TOKEN, REPO_ROOT } from '../src/config';
import { parseCommand } from '../src/cli';

const sources = {
  REFSYNC_SOURCE_TREATMENT_GROUP: 'https://upstream.example/treatment-groups.json',
  REFSYNC_SOURCE_REIMBURSEMENT_GROUP: 'file:///srv/upstream/reimbursement-groups.ndjson',
};

describe('importer configuration', () => {
  it('when NODE_ENV is production and no source is set, then start-up is refused naming both variables', () => {
    const production = {
      NODE_ENV: 'production',
      REFSYNC_IMPORTER_ADMIN_TOKEN: 'a-long-enough-production-token',
    };
    expect(() => parseEnv(importerEnvSchema, production)).toThrow(
      /REFSYNC_SOURCE_TREATMENT_GROUP: required.*REFSYNC_SOURCE_REIMBURSEMENT_GROUP: required/,
    );
    expect(() =>
      parseEnv(importerEnvSchema, {
        ...production,
        REFSYNC_SOURCE_TREATMENT_GROUP: sources.REFSYNC_SOURCE_TREATMENT_GROUP,
      }),
    ).toThrow(/REFSYNC_SOURCE_REIMBURSEMENT_GROUP: required/);
    expect(parseEnv(importerEnvSchema, { ...production, ...sources })).toMatchObject(sources);
  });

  it('when no source is set outside production, then start-up is refused too (there is no built-in upstream)', () => {
    expect(() => parseEnv(importerEnvSchema, { NODE_ENV: 'development' })).toThrow(
      /REFSYNC_SOURCE_TREATMENT_GROUP: required .*npm start passes the bundled sample data/,
    );
  });

  it('when only the sources are set, then the defaults apply and the sources are kept as given', () => {
    const config = parseEnv(importerEnvSchema, sources);
    expect(config).toMatchObject({
      ...sources,
      REFSYNC_IMPORTER_PORT: 3003,
      REFSYNC_IMPORTER_HOST: '0.0.0.0',
      REFSYNC_MAX_DELETE_SHARE: 0.2,
      REFSYNC_SCHEDULE: '0 2 * * *',
      REFSYNC_TIMEZONE: 'Europe/Oslo',
      REFSYNC_SOURCE_RETRIES: 3,
      REFSYNC_ONCE_PUBLISH_TIMEOUT_MS: 30_000,
    });
    expect(adminToken(config)).toEqual({ token: LOCAL_ADMIN_TOKEN, isDefault: true });
  });

  it('when a source is a relative file URL, then it is resolved against the repository root', () => {
    const config = parseEnv(importerEnvSchema, {
      ...sources,
      REFSYNC_SOURCE_TREATMENT_GROUP: 'file://./tools/x/tg.ndjson',
    });
    expect(config.REFSYNC_SOURCE_TREATMENT_GROUP).toBe(
      pathToFileURL(resolve(REPO_ROOT, 'tools/x/tg.ndjson')).href,
    );
  });

  it('when the auth header is set, then it becomes a header and a malformed one is refused without echoing it', () => {
    expect(
      parseEnv(importerEnvSchema, {
        ...sources,
        REFSYNC_SOURCE_AUTH_HEADER: 'Authorization: Bearer abc',
      }).REFSYNC_SOURCE_AUTH_HEADER,
    ).toEqual({
      Authorization: 'Bearer abc',
    });
    expect(() =>
      parseEnv(importerEnvSchema, { REFSYNC_SOURCE_AUTH_HEADER: 'Bearer sekret' }),
    ).toThrow(/REFSYNC_SOURCE_AUTH_HEADER/);
    expect(() =>
      parseEnv(importerEnvSchema, { REFSYNC_SOURCE_AUTH_HEADER: 'Bearer sekret' }),
    ).not.toThrow(/sekret/);
  });

  it('when values are wrong, then every bad variable is named', () => {
    expect(() =>
      parseEnv(importerEnvSchema, {
        ...sources,
        REFSYNC_SCHEDULE: 'every night',
        REFSYNC_TIMEZONE: 'Mars/Olympus',
        REFSYNC_MAX_DELETE_SHARE: '1.5',
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: 'ftp://x/y',
      }),
    ).toThrow(
      /REFSYNC_TIMEZONE.*REFSYNC_MAX_DELETE_SHARE|REFSYNC_MAX_DELETE_SHARE.*REFSYNC_TIMEZONE/,
    );
    expect(() =>
      parseEnv(importerEnvSchema, { ...sources, REFSYNC_SCHEDULE: 'every night' }),
    ).toThrow(/REFSYNC_SCHEDULE: expected a cron expression/);
    expect(() =>
      parseEnv(importerEnvSchema, { REFSYNC_SOURCE_REIMBURSEMENT_GROUP: 'ftp://x/y' }),
    ).toThrow(/REFSYNC_SOURCE_REIMBURSEMENT_GROUP/);
  });

  it('when NODE_ENV is production without an admin token, then the configuration is refused', () => {
    expect(() => parseEnv(importerEnvSchema, { NODE_ENV: 'production' })).toThrow(
      /REFSYNC_IMPORTER_ADMIN_TOKEN: required in production/,
    );
    const config = parseEnv(importerEnvSchema, {
      ...sources,
      NODE_ENV: 'production',
      REFSYNC_IMPORTER_ADMIN_TOKEN: 'a-long-enough-production-token',
    });
    expect(adminToken(config)).toEqual({
      token: 'a-long-enough-production-token',
      isDefault: false,
    });
  });
});

describe('command line', () => {
  it('when arguments are given, then they select the command', () => {
    expect(parseCommand([])).toEqual({ kind: 'worker' });
    expect(parseCommand(['--once'])).toEqual({ kind: 'once', allowMassDelete: false });
    expect(parseCommand(['--once', '--allow-mass-delete'])).toEqual({
      kind: 'once',
      allowMassDelete: true,
    });
    expect(parseCommand(['--dry-run'])).toEqual({ kind: 'dry-run', allowMassDelete: false });
    expect(parseCommand(['--history', '--limit', '5'])).toEqual({ kind: 'history', limit: 5 });
  });

  it('when arguments are wrong, then parsing says why', () => {
    expect(() => parseCommand(['--once', '--history'])).toThrow(/choose one/);
    expect(() => parseCommand(['--bogus'])).toThrow(/bogus/);
    expect(() => parseCommand(['--allow-mass-delete'])).toThrow(/goes with --once/);
    expect(() => parseCommand(['--history', '--limit', 'x'])).toThrow(/--limit/);
  });
});
