import { ConfigError } from '@nhp/shared-config';
import { runDbIndexes } from './db-indexes';

runDbIndexes(process.argv.slice(2), {
  env: process.env,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof ConfigError ? err.message : `db-indexes failed: ${String(err)}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  },
);
