module.exports = {
  displayName: 'db-indexes',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
