module.exports = {
  displayName: 'refsync-importer-lib',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
