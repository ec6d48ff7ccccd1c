module.exports = {
  displayName: 'image-check',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
