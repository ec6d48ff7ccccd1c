module.exports = {
  displayName: 'refsync-read',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
