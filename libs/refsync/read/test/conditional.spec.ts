import { ifNoneMatchMatches } from '../src/requests/conditional';

describe('ifNoneMatchMatches', () => {
  const etag = '"v3.tg.p.all.gz"';
  it.each([
    [etag, true],
    [`W/${etag}`, true],
    [`"other", ${etag}`, true],
    ['*', true],
    [' * ', true],
    ['"v3.tg.p.all.br"', false],
    ['v3.tg.p.all.gz', false],
    ['', false],
  ])('when If-None-Match is %j, then it matches: %s', (header, expected) => {
    expect(ifNoneMatchMatches(header, etag)).toBe(expected);
  });
});
