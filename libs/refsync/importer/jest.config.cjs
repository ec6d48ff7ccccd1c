module.exports = {
  displayName: 'refsync-import',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
