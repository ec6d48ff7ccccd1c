module.exports = {
  displayName: 'refsync-client',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
