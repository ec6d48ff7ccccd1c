// Not named jest.config.cjs on purpose: @nx/jest infers a `test` target only from that name, so
// these tests stay out of `npm test` and run with `npm run test:cluster` (README, "Running highly
// available"). Each test runs a three-node NATS cluster and several app processes.
module.exports = {
  displayName: 'cluster-tests',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  maxWorkers: 1,
  testTimeout: 180_000,
};
