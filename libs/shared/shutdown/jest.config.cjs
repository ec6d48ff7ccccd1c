module.exports = {
  displayName: 'shared-shutdown',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
