module.exports = {
  displayName: 'shared-outbox',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
};
