module.exports = {
  displayName: 'shared-http',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
