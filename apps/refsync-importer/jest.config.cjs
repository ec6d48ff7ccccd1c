module.exports = {
  displayName: 'refsync-importer',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
