import { z } from 'zod';
import {
  commonEnvShape,
  envBool,
  envDurationMs,
  envInt,
  envPort,
  envUrl,
  parseDurationMs,
  parseEnv,
} from '../src';

const one = <S extends z.ZodType>(schema: S, value: string | undefined): z.infer<S> => {
  const parsed: Record<string, unknown> = parseEnv(
    z.object({ V: schema }),
    value === undefined ? {} : { V: value },
  );
  return parsed['V'] as z.infer<S>;
};

describe('env building blocks', () => {
  it('when a port is a valid integer, then it is a number; when unset, then the default applies', () => {
    expect(one(envPort(3001), ' 8080 ')).toBe(8080);
    expect(one(envPort(3001), undefined)).toBe(3001);
  });

  it.each(['0', '65536', '80.5', '8o', '-1', '1e3'])(
    'when a port is %j, then it is rejected',
    (raw) => {
      expect(() => one(envPort(3001), raw)).toThrow(
        `V: expected integer 1-65535, got ${JSON.stringify(raw)}`,
      );
    },
  );

  it('when an integer has bounds, then the message states them', () => {
    expect(one(envInt({ min: 1 }), '7')).toBe(7);
    expect(() => one(envInt({ min: 1 }), '0')).toThrow('V: expected integer >= 1, got "0"');
    expect(() => one(envInt(), 'x')).toThrow('V: expected integer, got "x"');
  });

  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('when a boolean is %j, then it is %s', (raw, expected) => {
    expect(one(envBool(), raw)).toBe(expected);
  });

  it('when a boolean is a word other than true/false/1/0, then it is rejected rather than guessed', () => {
    expect(() => one(envBool(false), 'yes')).toThrow('V: expected true, false, 1 or 0, got "yes"');
    expect(one(envBool(true), undefined)).toBe(true);
  });

  it('when a URL has the wrong scheme, then it is rejected without echoing the value (it may hold a password)', () => {
    const schema = envUrl({ protocols: ['mongodb'] });
    expect(one(schema, 'mongodb://u:p@db:27017/x')).toBe('mongodb://u:p@db:27017/x');
    let message = '';
    try {
      one(schema, 'http://u:secret@db');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe('Invalid environment: V: expected a URL starting with mongodb://');
    expect(message).not.toContain('secret');
    expect(() => one(envUrl(), 'not a url')).toThrow('V: expected an absolute URL');
  });

  it.each([
    ['1500', 1500],
    ['1500ms', 1500],
    ['10s', 10_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
  ])('when a duration is %j, then it is %d ms', (raw, ms) => {
    expect(parseDurationMs(raw)).toBe(ms);
    expect(one(envDurationMs(), raw)).toBe(ms);
  });

  it('when a duration has an unknown unit, then it is rejected', () => {
    expect(() => one(envDurationMs(5), '10 days')).toThrow('V: expected a duration');
  });
});

describe('commonEnvShape', () => {
  const schema = z.object(commonEnvShape);

  it('when nothing is set, then every documented default applies', () => {
    expect(parseEnv(schema, {})).toEqual({
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      LOG_PRETTY: false,
      MONGO_URL: 'mongodb://127.0.0.1:27017/nhp',
      NATS_URL: 'nats://127.0.0.1:4222',
      NATS_STREAM_REPLICAS: 1,
      MONGO_WRITE_CONCERN: { w: 'majority', journal: true },
      MONGO_SERVER_SELECTION_TIMEOUT_MS: 1000,
      SHUTDOWN_TIMEOUT_MS: 10_000,
      MONGO_ENSURE_INDEXES: true,
      HTTP_HEADERS_TIMEOUT_MS: 10_000,
      HTTP_REQUEST_TIMEOUT_MS: 30_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 65_000,
      HTTP_MAX_CONNECTIONS: 10_000,
      HTTP_TRUST_PROXY: false,
    });
  });

  it('when HTTP_TRUST_PROXY is set, then booleans, hop counts and address lists are what Express takes, and anything else is refused', () => {
    const trust = (value: string) => parseEnv(schema, { HTTP_TRUST_PROXY: value }).HTTP_TRUST_PROXY;
    expect(trust('TRUE')).toBe(true);
    expect(trust('false')).toBe(false);
    expect(trust('2')).toBe(2);
    expect(trust('loopback, 10.0.0.0/8')).toBe('loopback,10.0.0.0/8');
    expect(() => trust('gateway.example')).toThrow(/HTTP_TRUST_PROXY: expected true, false/);
  });

  it('when the HTTP server limits are set, then durations take units and the connection cap must be positive', () => {
    expect(
      parseEnv(schema, {
        HTTP_HEADERS_TIMEOUT_MS: '5s',
        HTTP_REQUEST_TIMEOUT_MS: '20000',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '2m',
        HTTP_MAX_CONNECTIONS: '500',
      }),
    ).toMatchObject({
      HTTP_HEADERS_TIMEOUT_MS: 5_000,
      HTTP_REQUEST_TIMEOUT_MS: 20_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 120_000,
      HTTP_MAX_CONNECTIONS: 500,
    });
    expect(() => parseEnv(schema, { HTTP_MAX_CONNECTIONS: '0' })).toThrow(
      'HTTP_MAX_CONNECTIONS: expected integer >= 1, got "0"',
    );
  });

  it('when NATS_URL lists several servers, then each is checked and the list is kept; NATS_STREAM_REPLICAS is 1-5', () => {
    const env = (vars: Record<string, string>) => parseEnv(schema, vars);
    expect(env({ NATS_URL: 'nats://a:4222, nats://b:4222,tls://c:4222' }).NATS_URL).toBe(
      'nats://a:4222,nats://b:4222,tls://c:4222',
    );
    expect(() => env({ NATS_URL: 'nats://a:4222,http://b' })).toThrow(
      /NATS_URL: expected one or more/,
    );
    expect(() => env({ NATS_URL: 'nats://a:4222,' })).toThrow(/NATS_URL/);
    expect(env({ NATS_STREAM_REPLICAS: '3' }).NATS_STREAM_REPLICAS).toBe(3);
    expect(() => env({ NATS_STREAM_REPLICAS: '0' })).toThrow(/NATS_STREAM_REPLICAS/);
  });

  it('when MONGO_WRITE_CONCERN is set, then w, j and wtimeoutMS are read, and an unacknowledged or unknown form is refused', () => {
    const concern = (value: string) =>
      parseEnv(schema, { MONGO_WRITE_CONCERN: value }).MONGO_WRITE_CONCERN;
    expect(concern('majority')).toEqual({ w: 'majority', journal: true });
    expect(concern('1')).toEqual({ w: 1, journal: true });
    expect(concern('w=2, j=false, wtimeoutMS=5s')).toEqual({
      w: 2,
      journal: false,
      wtimeoutMS: 5000,
    });
    for (const bad of ['0', 'w=0', 'fast', 'j=maybe', 'w=1,w=2', 'w=1,x=2', 'majority,']) {
      expect(() => concern(bad)).toThrow(/MONGO_WRITE_CONCERN: expected w=majority/);
    }
  });

  it('when NODE_ENV or LOG_LEVEL is unknown, then the message lists the allowed values', () => {
    expect(() => parseEnv(schema, { NODE_ENV: 'prod', LOG_LEVEL: 'verbose' })).toThrow(
      'Invalid environment: NODE_ENV: expected one of development, test, production, got "prod"; ' +
        'LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    );
  });
});
