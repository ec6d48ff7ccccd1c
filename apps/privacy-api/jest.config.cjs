module.exports = {
  displayName: 'privacy-api',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
