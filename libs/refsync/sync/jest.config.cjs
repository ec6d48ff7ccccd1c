module.exports = {
  displayName: 'refsync-sync',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
