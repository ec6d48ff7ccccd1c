import { effectiveSince, parseSinceVersion } from '../src/index';

describe('parseSinceVersion', () => {
  it('when the parameter is absent, then there is no sinceVersion', () => {
    expect(parseSinceVersion(undefined)).toEqual({ ok: true, value: undefined });
  });

  it.each([
    ['0', 0n],
    ['42', 42n],
    ['007', 7n],
    ['-5', -5n],
    ['-0', 0n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
  ])('when it is %s, then it parses exactly', (raw, value) => {
    expect(parseSinceVersion(raw)).toEqual({ ok: true, value });
  });

  it.each([
    ['empty', ''],
    ['letters', 'abc'],
    ['a decimal fraction', '1.5'],
    ['exponent notation', '1e3'],
    ['a leading plus', '+1'],
    ['surrounding whitespace', ' 1'],
    ['a trailing space', '1 '],
    ['hex', '0x10'],
    ['a lone minus', '-'],
    ['digits then letters', '12abc'],
    ['one above the int64 maximum', '9223372036854775808'],
    ['one below the int64 minimum', '-9223372036854775809'],
    ['far out of range', '1'.repeat(40)],
    ['non-ASCII digits', '١٢'],
  ])('when it is %s, then it is rejected with a reason', (_case, raw) => {
    const result = parseSinceVersion(raw);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).not.toBe('');
  });

  it('when the parameter is given twice, then it is rejected', () => {
    expect(parseSinceVersion(['1', '2'])).toEqual({
      ok: false,
      reason: 'must be given at most once',
    });
  });

  it('when the query parser produced an object or a number, then it is rejected', () => {
    expect(parseSinceVersion({ a: '1' }).ok).toBe(false);
    expect(parseSinceVersion(5).ok).toBe(false);
    expect(parseSinceVersion(null).ok).toBe(false);
  });
});

describe('effectiveSince', () => {
  it('when the value is negative, then it behaves as 0', () => {
    expect(effectiveSince(-1n)).toBe(0);
    expect(effectiveSince(-9223372036854775808n)).toBe(0);
  });

  it('when the value is a normal version, then it is kept', () => {
    expect(effectiveSince(0n)).toBe(0);
    expect(effectiveSince(12n)).toBe(12);
  });

  it('when the value exceeds the safe-integer range, then it stays above every version', () => {
    expect(effectiveSince(9223372036854775807n)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('when there is no value, then there is none', () => {
    expect(effectiveSince(undefined)).toBeUndefined();
  });
});
