module.exports = {
  displayName: 'refsync-data-access',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
