import { createHash } from 'node:crypto';
import { generateApiKey, KEY_PREFIX } from '../src/keys';

describe('generateApiKey', () => {
  it('when a key is generated, then the entry carries the client name and the SHA-256 of exactly that key', () => {
    const generated = generateApiKey('acme-pharmacy');
    expect(generated.key.startsWith(KEY_PREFIX)).toBe(true);
    expect(generated.key).toMatch(/^rsk_[A-Za-z0-9_-]{43}$/);
    expect(generated.sha256).toBe(createHash('sha256').update(generated.key).digest('hex'));
    expect(generated.entry).toBe(`acme-pharmacy:${generated.sha256}`);
  });

  it('when two keys are generated, then they differ', () => {
    expect(generateApiKey('a').key).not.toBe(generateApiKey('a').key);
  });

  it.each(['', 'has space', 'with:colon', 'a,b', '-leading', 'x'.repeat(65)])(
    'when the client name is %j, then it is refused',
    (name) => {
      expect(() => generateApiKey(name)).toThrow(RangeError);
    },
  );
});
