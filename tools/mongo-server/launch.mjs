// Starts the server's CLI (src/cli.ts) from a bundle of it: `npm run mongo-server` and
// startServerProcess (src/process.ts; tests, fault tests, benches) both run `node <flags>
// tools/mongo-server/launch.mjs <args>` as package.json's "mongo-server" script says, so what is
// tested is what runs, with the same Node flags.
//
// Why a bundle: tsx transpiles every source file through its loader hooks at each start, a large
// part of the start-up budget after a SIGKILL (README, "Persistence"). esbuild (the compiler tsx
// itself uses) bundles the server's own sources into one CommonJS file, rebuilt whenever a source
// changed (bundle.mjs). mingo is bundled too: it is some 600 small CommonJS files, and finding,
// reading and compiling them one by one took about 0.1 s of CPU at each start. bson (one file) and
// pino (which loads worker files by path) stay in node_modules, loaded by Node.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBundle } from './bundle.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const bundle = await ensureBundle({
  root,
  entry: path.join(here, 'src/cli.ts'),
  outDir: path.join(root, 'node_modules/.cache/mongo-server'),
  tsconfig: path.join(root, 'tsconfig.base.json'),
  external: ['bson', 'pino'],
  // patch-package's patches change installed packages without changing their versions.
  extraInputs: readdirSync(path.join(root, 'patches')).map((f) => path.join(root, 'patches', f)),
});
createRequire(import.meta.url)(bundle);
