module.exports = {
  displayName: 'shared-tracing',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
