// Not named jest.config.cjs on purpose: @nx/jest infers a `test` target only from that name, so
// these tests stay out of `npm test` and run with `npm run test:faults` (see README.md).
module.exports = {
  displayName: 'fault-tests',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  // Every test drives processes through 20 restarts; one at a time keeps a 2-core machine usable.
  maxWorkers: 1,
  testTimeout: 180_000,
};
