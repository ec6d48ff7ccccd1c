/**
 * npm run asyncapi: writes the AsyncAPI documents of the events (docs/asyncapi/*.json) from the
 * events' zod schemas, formatted as `prettier --check` expects. `--check` writes nothing and exits
 * 1 when a file is missing or differs from what the schemas make now (tools/asyncapi-docs/test
 * checks the same in `npm test`).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { ASYNCAPI_DOCUMENTS } from './documents';

const ROOT = resolve(__dirname, '../../..');

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const { path, build } of ASYNCAPI_DOCUMENTS) {
    const file = resolve(ROOT, path);
    const text = await format(JSON.stringify(build()), {
      ...(await resolveConfig(file)),
      filepath: file,
    });
    const current = await readFile(file, 'utf8').catch(() => undefined);
    if (current === text) {
      console.log(`${path}: current`);
    } else if (check) {
      console.error(`${path}: not current; run npm run asyncapi`);
      stale++;
    } else {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
      console.log(`${path}: written`);
    }
  }
  return stale > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
