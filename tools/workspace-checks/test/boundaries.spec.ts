/**
 * The architecture rules are lint rules; these tests prove they bite. Each lints a snippet as if it
 * were a file of the named project (the file is never written).
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(__dirname, '../../..');

interface LintResult {
  messages: Array<{ ruleId: string | null; message: string }>;
}

// ESLint runs as its own process: its flat config is an ES module, which Jest's CommonJS
// sandbox cannot import.
async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const run = spawnSync(
    process.execPath,
    [
      resolve(root, 'node_modules/eslint/bin/eslint.js'),
      '--stdin',
      '--stdin-filename',
      filePath,
      '--format',
      'json',
    ],
    { cwd: root, input: code, encoding: 'utf8', env: { ...process.env, NX_DAEMON: 'false' } },
  );
  const results = JSON.parse(run.stdout) as LintResult[];
  return (results[0]?.messages ?? [])
    .filter((m) => m.ruleId === '@nx/enforce-module-boundaries')
    .map((m) => m.message);
}

describe('module boundaries', () => {
  it('when a contracts lib imports mongoose, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/refsync/contracts/src/violation.ts',
      "import mongoose from 'mongoose';\nexport const x = mongoose;\n",
    );
    expect(errors.join('\n')).toMatch(/mongoose/);
  });

  it('when a contracts lib imports only zod, then lint passes', async () => {
    const errors = await boundaryErrors(
      'libs/refsync/contracts/src/fine.ts',
      "import { z } from 'zod';\nexport const x = z.string();\n",
    );
    expect(errors).toEqual([]);
  });

  it('when a domain lib imports express or the NATS client, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/refsync/domain/src/violation.ts',
      "import express from 'express';\nimport { connect } from '@nats-io/transport-node';\nexport const x = [express, connect];\n",
    );
    expect(errors).toHaveLength(2);
  });

  it('when a feature lib imports mongoose, the NATS client or express, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/refsync/importer/src/violation.ts',
      "import mongoose from 'mongoose';\nimport { connect } from '@nats-io/transport-node';\nimport express from 'express';\nexport const x = [mongoose, connect, express];\n",
    );
    expect(errors).toHaveLength(3);
  });

  it('when a data-access lib imports a feature lib, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/refsync/sources/src/violation.ts',
      "import { createImporter } from '@nhp/refsync-import';\nexport const x = createImporter;\n",
    );
    expect(errors.join('\n')).toMatch(/type:data-access/);
  });

  it('when a shared lib imports a refsync lib, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/shared/http/src/violation.ts',
      "import { datasetSchema } from '@nhp/refsync-contracts';\nexport const x = datasetSchema;\n",
    );
    expect(errors.length).toBeGreaterThan(0);
  });

  it('when the shared metrics lib imports a privacy lib, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/shared/metrics/src/violation.ts',
      "import { REFUSED_CODE } from '@nhp/privacy-auth';\nexport const x = REFUSED_CODE;\n",
    );
    expect(errors.length).toBeGreaterThan(0);
  });

  it('when an app imports a tool, then lint fails; when its tests do, then lint passes', async () => {
    const code =
      "import { sampleDataPath } from '@nhp/refsync-sample-data';\nexport const x = sampleDataPath;\n";
    const errors = await boundaryErrors('apps/refsync-importer/src/violation.ts', code);
    expect(errors.join('\n')).toMatch(/type:app/);
    expect(await boundaryErrors('apps/refsync-importer/test/fine.spec.ts', code)).toEqual([]);
  });

  it('when a lib imports a tool, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/refsync/sources/src/violation.ts',
      "import { sampleDataPath } from '@nhp/refsync-sample-data';\nexport const x = sampleDataPath;\n",
    );
    expect(errors.length).toBeGreaterThan(0);
  });

  it('when production code imports the test infrastructure, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/shared/persistence/src/violation.ts',
      "import { startTestInfra } from '@nhp/shared-testing';\nexport const x = startTestInfra;\n",
    );
    expect(errors.length).toBeGreaterThan(0);
  });

  it('when the privacy client imports the NATS client or a tool, then lint fails', async () => {
    const errors = await boundaryErrors(
      'libs/privacy/client/src/violation.ts',
      "import { connect } from '@nats-io/transport-node';\nimport { registerClient } from '@nhp/privacy-dev-issuer';\nexport const x = [connect, registerClient];\n",
    );
    expect(errors).toHaveLength(2);
  });
});
