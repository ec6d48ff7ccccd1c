module.exports = {
  displayName: 'privacy-client',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
