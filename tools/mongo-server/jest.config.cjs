module.exports = {
  displayName: 'mongo-server',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
};
