module.exports = {
  displayName: 'privacy-admin',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
