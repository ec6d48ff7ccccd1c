module.exports = {
  displayName: 'privacy-sample-data',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
