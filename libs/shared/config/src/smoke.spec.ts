import { z } from 'zod';
describe('toolchain', () => {
  it('when zod parses, then swc-jest runs TypeScript', () => {
    expect(z.number().parse(1)).toBe(1);
  });
});
