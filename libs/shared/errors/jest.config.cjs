module.exports = {
  displayName: 'shared-errors',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
