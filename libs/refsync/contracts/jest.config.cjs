module.exports = {
  displayName: 'refsync-contracts',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
