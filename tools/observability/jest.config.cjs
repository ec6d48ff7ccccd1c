// The alert rules against the runbook and against real scrapes of the three apps (test/): part of
// `npm test`. promtool's own checks and rule tests run in .ci/run.
module.exports = {
  displayName: 'observability',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testTimeout: 180_000,
};
