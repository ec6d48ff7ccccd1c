import { compareResponseOrder } from '../src/index';

describe('compareResponseOrder', () => {
  it('when ids are ordered in memory, then the order is by version, then by UTF-8 bytes as MongoDB sorts', () => {
    const ids = ['\u{1F600}', '\uFF21', 'b', 'B10', 'a'].map((itemId) => ({ version: 1, itemId }));
    expect(ids.sort(compareResponseOrder).map((i) => i.itemId)).toEqual([
      'B10',
      'a',
      'b',
      '\uFF21',
      '\u{1F600}',
    ]);
    expect(
      compareResponseOrder({ version: 1, itemId: 'z' }, { version: 2, itemId: 'a' }),
    ).toBeLessThan(0);
  });
});
