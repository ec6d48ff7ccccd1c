module.exports = {
  displayName: 'refsync-domain',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
