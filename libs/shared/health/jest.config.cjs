module.exports = {
  displayName: 'shared-health',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
