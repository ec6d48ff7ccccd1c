module.exports = {
  displayName: 'privacy-mirror',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
