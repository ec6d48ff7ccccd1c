module.exports = {
  displayName: 'refsync-api',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
