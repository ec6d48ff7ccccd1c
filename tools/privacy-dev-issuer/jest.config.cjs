module.exports = {
  displayName: 'privacy-dev-issuer',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
