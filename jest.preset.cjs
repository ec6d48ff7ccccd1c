// Shared Jest settings. @nx/jest's preset brings the resolver that maps the tsconfig path aliases
// (@nhp/*) to source; SWC transpiles TypeScript (typechecking is the `typecheck` target's job).
const nxPreset = require('@nx/jest/preset').default;

module.exports = {
  ...nxPreset,
  testEnvironment: 'node',
  // Refuses a run under a Node major other than .nvmrc's (see there).
  globalSetup: require.resolve('./jest.global-setup.cjs'),
  // Specs live in test/ only (tools/workspace-checks/test/layout.spec.ts names any left in src/).
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  transform: {
    '^.+\\.[tj]s$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  // jose, p-retry and openid-client ship as ES modules only; Jest's CommonJS runtime needs them transpiled too.
  transformIgnorePatterns: [
    '/node_modules/(?!(jose|p-retry|is-network-error|openid-client|oauth4webapi)/)',
  ],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Component tests start real servers (MongoDB-compatible server, nats-server); one worker per
  // project keeps a 2-core machine responsive while Nx runs two projects side by side.
  maxWorkers: 1,
  testTimeout: 30_000,
};
