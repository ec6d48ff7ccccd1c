module.exports = {
  displayName: 'doc-tests',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
