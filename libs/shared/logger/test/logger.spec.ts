import { createLogger, redactPaths, type DestinationStream } from '../src';

function capture(): {
  stream: DestinationStream;
  lines: () => Record<string, unknown>[];
  text: () => string;
} {
  const chunks: string[] = [];
  return {
    stream: { write: (chunk: string) => void chunks.push(chunk) },
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    text: () => chunks.join(''),
  };
}

/** Reads a dotted path ("req.body.items.0.fnr") out of a parsed log line. */
function at(line: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown>)?.[key], line);
}

const FNR = '01017012345';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.payload.signature';

describe('createLogger', () => {
  it('when it logs, then each line is JSON with the service name, level and ISO time', () => {
    const out = capture();
    createLogger({ name: 'privacy-api', destination: out.stream }).info(
      { partKode: 'HN' },
      'hello',
    );
    const [line] = out.lines();
    expect(line).toMatchObject({ name: 'privacy-api', level: 30, msg: 'hello', partKode: 'HN' });
    expect(new Date(String(line['time'])).toISOString()).toBe(line['time']);
  });

  it('when the level is warn, then info lines are dropped', () => {
    const out = capture();
    const logger = createLogger({ name: 't', level: 'warn', destination: out.stream });
    logger.info('quiet');
    logger.warn('loud');
    expect(out.lines().map((l) => l['msg'])).toEqual(['loud']);
  });

  it('when a line carries credentials or national identity numbers at any covered depth, then they are "[Redacted]"', () => {
    const out = capture();
    const logger = createLogger({ name: 't', destination: out.stream });
    logger.info(
      {
        innbyggerFnr: FNR,
        fnr: FNR,
        pid: FNR,
        accessToken: TOKEN,
        req: {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'x-api-key': 'local-dev-key',
            cookie: 'session=abc',
            dpop: TOKEN,
            'content-type': 'application/json',
          },
          body: {
            fodselsnummer: FNR,
            nationalIdentityNumber: FNR,
            relasjoner: { innbyggerFnr: FNR },
            items: [{ fnr: FNR }],
          },
        },
        res: { statusCode: 200, headers: { 'set-cookie': ['session=abc'] } },
        user: { refreshToken: TOKEN, apiKey: 'k', profile: { innbyggerFnr: FNR } },
      },
      'request',
    );
    const text = out.text();
    expect(text).not.toContain(FNR);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('local-dev-key');
    expect(text).not.toContain('session=abc');

    const [line] = out.lines();
    expect(at(line, 'innbyggerFnr')).toBe('[Redacted]');
    expect(at(line, 'req.headers')).toEqual({
      authorization: '[Redacted]',
      'x-api-key': '[Redacted]',
      cookie: '[Redacted]',
      dpop: '[Redacted]',
      'content-type': 'application/json',
    });
    expect(at(line, 'req.body.relasjoner.innbyggerFnr')).toBe('[Redacted]');
    expect(at(line, 'req.body.items.0.fnr')).toBe('[Redacted]');
    expect(at(line, 'res.headers.set-cookie')).toBe('[Redacted]');
    expect(at(line, 'user.profile.innbyggerFnr')).toBe('[Redacted]');
    expect(at(line, 'req.method')).toBe('POST');
  });

  it('when a child logger is bound to sensitive fields, then they are redacted too', () => {
    const out = capture();
    createLogger({ name: 't', destination: out.stream })
      .child({ req: { headers: { authorization: `Bearer ${TOKEN}` } } })
      .info('child');
    expect(out.text()).not.toContain(TOKEN);
    expect(out.text()).toContain('[Redacted]');
  });

  it('when pretty output is asked for, then a logger is still returned (pino-pretty is a dev dependency here)', () => {
    expect(() => createLogger({ name: 't', pretty: true, level: 'silent' })).not.toThrow();
  });

  it('when paths are listed, then a header name with a dash uses bracket syntax pino understands', () => {
    expect(redactPaths).toEqual(
      expect.arrayContaining(['authorization', '*.*["x-api-key"]', '*.*.innbyggerFnr']),
    );
  });
});
