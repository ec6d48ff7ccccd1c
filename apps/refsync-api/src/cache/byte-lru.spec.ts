import { ByteLru } from './byte-lru';

const lru = (maxBytes: number, evicted: string[] = []) =>
  new ByteLru<string>({ maxBytes, sizeOf: (v) => v.length, onEvict: (k) => evicted.push(k) });

describe('ByteLru', () => {
  it('when the byte bound is exceeded, then the least recently used entries are evicted first', () => {
    const evicted: string[] = [];
    const cache = lru(10, evicted);
    cache.set('a', 'aaaa');
    cache.set('b', 'bbbb');
    expect(cache.get('a')).toBe('aaaa'); // a is now the most recently used
    cache.set('c', 'cccc');
    expect(evicted).toEqual(['b']);
    expect(cache.keys()).toEqual(['a', 'c']);
    expect(cache.totalBytes).toBe(8);
  });

  it('when a value is larger than the whole bound, then it is not stored and nothing is evicted', () => {
    const cache = lru(5);
    cache.set('a', 'aa');
    expect(cache.set('big', 'x'.repeat(6))).toBe(false);
    expect(cache.keys()).toEqual(['a']);
  });

  it('when a key is replaced, then its old size is released', () => {
    const cache = lru(10);
    cache.set('a', 'aaaaaaaa');
    cache.set('a', 'aa');
    expect(cache.totalBytes).toBe(2);
  });

  it('when entries are deleted by predicate, then size and bytes follow', () => {
    const cache = lru(100);
    cache.set('v1.x', 'one');
    cache.set('v2.x', 'two');
    cache.set('v1.y', 'three');
    expect(cache.deleteWhere((k) => k.startsWith('v1.'))).toBe(2);
    expect(cache.keys()).toEqual(['v2.x']);
    expect(cache.totalBytes).toBe(3);
  });
});
