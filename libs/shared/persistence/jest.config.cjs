module.exports = {
  displayName: 'shared-persistence',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
