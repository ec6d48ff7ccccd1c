module.exports = {
  displayName: 'refsync-sources',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
