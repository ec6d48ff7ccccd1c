module.exports = {
  displayName: 'shared-testing',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
