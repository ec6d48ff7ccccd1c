import {
  createLogger,
  REDACTED,
  redactDeep,
  redactIdentityNumbers,
  redactPaths,
  redactQuery,
  type DestinationStream,
} from '../src';

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

  it("when sensitive fields sit deeper than any listed path, in arrays or in an error, then they are redacted and the caller's object is unchanged", () => {
    const out = capture();
    const logger = createLogger({ name: 't', destination: out.stream });
    const payload = {
      import: {
        batches: [{ relasjoner: [{ person: { annenFnr: FNR, navn: 'Kari' } }] }],
        source: { auth: { Authorization: `Bearer ${TOKEN}`, headers: { 'X-API-KEY': 'k-123' } } },
      },
      cycle: {} as Record<string, unknown>,
    };
    payload.cycle['self'] = payload.cycle;
    const err = Object.assign(new Error('import refused'), {
      details: { rows: [{ row: 3, values: { innbyggerFnr: FNR, pid: FNR } }] },
    });
    logger.info(payload, 'deep');
    logger.error({ err }, 'failed');
    logger.error(err);

    const text = out.text();
    expect(text).not.toContain(FNR);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('k-123');
    const [deep, failed, bare] = out.lines();
    expect(at(deep, 'import.batches.0.relasjoner.0.person')).toEqual({
      annenFnr: '[Redacted]',
      navn: 'Kari',
    });
    expect(at(failed, 'err.details.rows.0.values')).toEqual({
      innbyggerFnr: '[Redacted]',
      pid: '[Redacted]',
    });
    expect(at(failed, 'err.message')).toBe('import refused');
    expect(String(at(failed, 'err.stack'))).toContain('logger.spec.ts');
    expect(at(bare, 'err.details.rows.0.row')).toBe(3);
    expect(payload.import.batches[0]?.relasjoner[0]?.person.annenFnr).toBe(FNR);
    expect(err.details.rows[0]?.values.innbyggerFnr).toBe(FNR);
  });

  it('when an object has no sensitive field, then redactDeep returns it as it is', () => {
    const value = { a: [{ b: 1 }], c: { d: 'x' } };
    expect(redactDeep(value)).toBe(value);
    expect(redactDeep({ a: { fnr: FNR } })).toEqual({ a: { fnr: '[Redacted]' } });
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

describe('URL redaction by rule', () => {
  it('when a query parameter is named like a credential in any case or form, then its value is replaced; other values stay', () => {
    expect(
      redactQuery({
        access_token: 't',
        API_KEY: 'k',
        clientSecret: 's',
        passwd: 'p',
        client_assertion: 'a',
        code: 'c',
        page: '2',
        list: ['13116900216', 'x'],
      }),
    ).toEqual({
      access_token: REDACTED,
      API_KEY: REDACTED,
      clientSecret: REDACTED,
      passwd: REDACTED,
      client_assertion: REDACTED,
      code: REDACTED,
      page: '2',
      list: [REDACTED, 'x'],
    });
  });

  it('when a text holds an 11-digit number alone, then it is replaced; longer or shorter runs stay', () => {
    expect(redactIdentityNumbers('/a/13116900216/b?x=a13116900216b')).toBe(
      `/a/${REDACTED}/b?x=a${REDACTED}b`,
    );
    expect(redactIdentityNumbers('/a/131169002161/1311690021')).toBe('/a/131169002161/1311690021');
  });
});
