module.exports = {
  displayName: 'shared-openapi',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
