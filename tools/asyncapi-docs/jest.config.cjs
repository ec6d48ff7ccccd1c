module.exports = {
  displayName: 'asyncapi-docs',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testTimeout: 60_000,
};
