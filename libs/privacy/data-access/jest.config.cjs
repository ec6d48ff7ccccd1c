module.exports = {
  displayName: 'privacy-data-access',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
