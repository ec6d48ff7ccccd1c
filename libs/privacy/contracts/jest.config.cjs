module.exports = {
  displayName: 'privacy-contracts',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
