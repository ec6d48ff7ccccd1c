module.exports = {
  displayName: 'shared-messaging',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
