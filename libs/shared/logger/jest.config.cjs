module.exports = {
  displayName: 'shared-logger',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
