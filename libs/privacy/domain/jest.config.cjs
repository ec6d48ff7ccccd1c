module.exports = {
  displayName: 'privacy-domain',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
