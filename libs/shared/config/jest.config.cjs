module.exports = {
  displayName: 'shared-config',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
