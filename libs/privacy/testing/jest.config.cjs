module.exports = {
  displayName: 'privacy-testing',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
