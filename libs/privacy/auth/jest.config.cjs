module.exports = {
  displayName: 'privacy-auth',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
