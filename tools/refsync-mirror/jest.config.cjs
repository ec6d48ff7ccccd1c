module.exports = {
  displayName: 'refsync-mirror',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
