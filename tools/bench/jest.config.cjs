module.exports = {
  displayName: 'bench',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
