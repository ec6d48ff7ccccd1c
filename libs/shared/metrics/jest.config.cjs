module.exports = {
  displayName: 'shared-metrics',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
