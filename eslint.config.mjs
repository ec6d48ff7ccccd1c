import nx from '@nx/eslint-plugin';

// Module boundaries: every project carries one scope:* and one type:* tag (see project.json).
// The constraints below are the architecture; a violation fails `npm test`.
const natsClients = ['@nats-io/*', 'nats'];
const mongoClients = ['mongoose', 'mongodb'];
const httpFrameworks = ['express', 'express-*', 'pino-http', 'supertest'];
/** What a data-access lib may import; a feature lib may import the same and other features. */
const dataAccessMayUse = [
  'type:core',
  'type:contracts',
  'type:domain',
  'type:data-access',
  'type:util',
];

/**
 * Test files may also use the shared test infrastructure (type:testing), whatever their project's
 * type; production code may not.
 */
function depConstraints({ tests = false } = {}) {
  const constraints = [
    // Scopes: privacy and refsync never import each other; shared imports neither. Workspace
    // tools (benchmarks) measure every scope and may import any of them.
    { sourceTag: 'scope:workspace', onlyDependOnLibsWithTags: ['*'] },
    { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
    { sourceTag: 'scope:privacy', onlyDependOnLibsWithTags: ['scope:privacy', 'scope:shared'] },
    { sourceTag: 'scope:refsync', onlyDependOnLibsWithTags: ['scope:refsync', 'scope:shared'] },
    // Types. type:core (the framework-free error type) is importable by every layer.
    { sourceTag: 'type:core', onlyDependOnLibsWithTags: [] },
    {
      sourceTag: 'type:contracts',
      onlyDependOnLibsWithTags: ['type:contracts', 'type:core'],
      allowedExternalImports: ['zod', 'zod/*'],
    },
    {
      sourceTag: 'type:domain',
      onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:domain'],
      bannedExternalImports: [...natsClients, ...mongoClients, ...httpFrameworks],
    },
    {
      sourceTag: 'type:data-access',
      onlyDependOnLibsWithTags: dataAccessMayUse,
      bannedExternalImports: [...httpFrameworks],
    },
    // A feature is a use case that needs infrastructure a domain lib may not touch: it composes
    // the domain, the data-access repositories and the util clients (messaging, metrics, tracing),
    // and reaches MongoDB, NATS and HTTP only through them. Apps (and tools) import it; no lib below does.
    {
      sourceTag: 'type:feature',
      onlyDependOnLibsWithTags: [...dataAccessMayUse, 'type:feature'],
      bannedExternalImports: [...natsClients, ...mongoClients, ...httpFrameworks],
    },
    {
      sourceTag: 'type:util',
      onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:util'],
    },
    {
      sourceTag: 'type:client',
      onlyDependOnLibsWithTags: ['type:core', 'type:contracts'],
      bannedExternalImports: [...natsClients, ...mongoClients, ...httpFrameworks],
    },
    {
      sourceTag: 'type:testing',
      onlyDependOnLibsWithTags: [
        'type:core',
        'type:contracts',
        'type:util',
        'type:data-access',
        'type:tool',
        'type:testing',
      ],
    },
    { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['*'] },
    // Apps may import every kind of lib but no tool: tools (sample data, the MongoDB-compatible
    // server, benchmarks) are not shipped. Their tests may (see below). A list rather than
    // notDependOnLibsWithTags, which Nx checks transitively through test-only dependencies.
    {
      sourceTag: 'type:app',
      onlyDependOnLibsWithTags: [
        'type:core',
        'type:contracts',
        'type:domain',
        'type:data-access',
        'type:util',
        'type:client',
        'type:feature',
      ],
    },
  ];
  if (!tests) return constraints;
  return constraints.map((c) =>
    c.onlyDependOnLibsWithTags &&
    c.sourceTag.startsWith('type:') &&
    !c.onlyDependOnLibsWithTags.includes('*')
      ? {
          ...c,
          onlyDependOnLibsWithTags: [...c.onlyDependOnLibsWithTags, 'type:testing', 'type:tool'],
        }
      : c,
  );
}

function boundaries(options) {
  return [
    'error',
    {
      enforceBuildableLibDependency: true,
      banTransitiveDependencies: true,
      allow: [],
      depConstraints: depConstraints(options),
    },
  ];
}

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  ...nx.configs['flat/javascript'],
  { ignores: ['**/dist', '**/node_modules', '**/coverage', '**/tmp', '.nx'] },
  {
    files: ['**/*.ts', '**/*.js'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries(),
    },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries({ tests: true }),
    },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
];
