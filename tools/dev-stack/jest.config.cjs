module.exports = {
  displayName: 'dev-stack',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
