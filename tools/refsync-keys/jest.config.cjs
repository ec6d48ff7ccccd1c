module.exports = {
  displayName: 'refsync-keys',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
