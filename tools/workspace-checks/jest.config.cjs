module.exports = {
  displayName: 'workspace-checks',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testTimeout: 120_000,
};
