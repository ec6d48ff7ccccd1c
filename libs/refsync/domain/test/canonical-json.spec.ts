import { canonicalJson, contentHash } from '../src/index';

describe('canonicalJson', () => {
  it('when keys are in any order at any depth, then the output sorts them and has no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it('when arrays are reordered, then the output differs (order is data)', () => {
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('when values are undefined, then they are treated as JSON.stringify treats them', () => {
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
  });

  it('when strings need escaping, then they are escaped as JSON', () => {
    expect(canonicalJson({ 'k"': 'æøå\n"' })).toBe('{"k\\"":"æøå\\n\\""}');
  });

  it('when the value is not representable, then it throws', () => {
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
  });
});

describe('contentHash', () => {
  it('when data differs only in key order, then the hash is equal', () => {
    expect(contentHash({ id: 'x', name: 'y', tags: ['a'] })).toBe(
      contentHash({ tags: ['a'], name: 'y', id: 'x' }),
    );
  });

  it('when a value changes, then the hash changes', () => {
    expect(contentHash({ id: 'x', name: 'y' })).not.toBe(contentHash({ id: 'x', name: 'z' }));
  });

  it('when hashed, then it is a sha256 hex digest', () => {
    expect(contentHash({})).toMatch(/^[0-9a-f]{64}$/);
  });
});
