module.exports = {
  displayName: 'refsync-sample-data',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
