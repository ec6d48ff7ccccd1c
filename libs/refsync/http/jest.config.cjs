module.exports = {
  displayName: 'refsync-http',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
