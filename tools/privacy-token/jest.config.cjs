module.exports = {
  displayName: 'privacy-token',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
