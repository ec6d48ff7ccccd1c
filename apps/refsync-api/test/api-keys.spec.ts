import {
  createApiKeyVerifier,
  LOCAL_DEV_KEY,
  localDevKeys,
  parseApiKeys,
  sha256Hex,
} from '../src/auth/api-keys';

const entry = (client: string, key: string) => `${client}:${sha256Hex(key)}`;

describe('parseApiKeys', () => {
  it('when several entries are configured, then each key maps to its client, rotation included', () => {
    const parsed = parseApiKeys(
      ` ${entry('acme', 'k1')}, ${entry('acme', 'k2')},${entry('apotek-1', 'k3')}, `,
    );
    expect(parsed.ok).toBe(true);
    const verifier = createApiKeyVerifier(parsed.ok ? parsed.keys : []);
    expect(verifier.verify('k1')).toBe('acme');
    expect(verifier.verify('k2')).toBe('acme');
    expect(verifier.verify('k3')).toBe('apotek-1');
    expect(verifier.clients).toEqual(['acme', 'apotek-1']);
  });

  it.each([
    ['no colon', 'acme'],
    ['short hash', 'acme:abc123'],
    ['non-hex hash', `acme:${'z'.repeat(64)}`],
    ['empty client', `:${sha256Hex('k')}`],
    ['client with space', `ac me:${sha256Hex('k')}`],
  ])(
    'when an entry has %s, then the problem names its position but not its content',
    (_case, bad) => {
      const parsed = parseApiKeys(`${entry('ok', 'k0')},${bad}`);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.problems).toHaveLength(1);
        expect(parsed.problems[0]).toMatch(
          /^entry 2: expected <client name>:<sha256 hex of the key>/,
        );
        expect(parsed.problems[0]).not.toContain(bad.slice(-20));
      }
    },
  );

  it('when one key is configured for two clients, then it is refused', () => {
    const parsed = parseApiKeys(`${entry('a', 'same')},${entry('b', 'same')}`);
    expect(parsed).toEqual({
      ok: false,
      problems: ['entry 2: the same key is already configured for client "a"'],
    });
  });

  it('when nothing is configured, then the list is empty', () => {
    expect(parseApiKeys(undefined)).toEqual({ ok: true, keys: [] });
    expect(parseApiKeys(' , ')).toEqual({ ok: true, keys: [] });
  });
});

describe('createApiKeyVerifier', () => {
  const verifier = createApiKeyVerifier(localDevKeys());

  it('when the development key is presented, then the local-dev client is recognised', () => {
    expect(verifier.verify(LOCAL_DEV_KEY)).toBe('local-dev');
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['wrong', 'local-dev-key2'],
    ['repeated header', [LOCAL_DEV_KEY, LOCAL_DEV_KEY]],
    ['absurdly long', 'k'.repeat(10_000)],
  ])('when the key is %s, then no client is recognised', (_case, presented) => {
    expect(verifier.verify(presented as string | string[] | undefined)).toBeUndefined();
  });
});
