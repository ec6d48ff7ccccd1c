// A bundle of a TypeScript entry point that is never stale (used by launch.mjs for the server's
// CLI; plain JavaScript, as it runs before anything could transpile it).
//
// Next to the bundles, a manifest names the current bundle and lists every source file esbuild read
// with a SHA-256 of the contents it read (plus esbuild's version, the build options and the
// `extraInputs`). Each call hashes those files again (a few hundred KB for the server) and rebuilds
// when anything differs, so an edited, added or removed import is always picked up, whatever the
// files' times say. A bundled package (under node_modules) is recorded by its package.json (name
// and version) rather than file by file: installs change it, and hashing a package's hundreds of
// files at every start would cost what the bundle saves; patches to packages are `extraInputs`. A bundle's
// name is the hash of what it was built from, and the manifest is written to a temporary name and
// renamed, so runs side by side (parallel tests) never read a half-written file or a manifest with
// another build's bundle.
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const hash = (contents) => createHash('sha256').update(contents).digest('hex');
/** Bundles no manifest has named for this long are removed when a new one is built. */
const KEEP_OLD_MS = 60 * 60 * 1000;

const LOADERS = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.json': 'json',
};

/**
 * Returns the path of a CommonJS bundle of `entry` built from the sources as they are now,
 * building it first unless the last one still matches them.
 * @param {{ root: string, entry: string, outDir: string, tsconfig: string, external?: string[], extraInputs?: string[] }} opts
 *   root: the directory source paths are recorded relative to; entry: the entry point;
 *   outDir: where bundles and the manifest live; tsconfig: for esbuild's path aliases;
 *   external: packages left to Node to load from node_modules at run time (all when not given);
 *   extraInputs: more files whose contents decide the bundle.
 * @returns {Promise<string>}
 */
export async function ensureBundle({ root, entry, outDir, tsconfig, external, extraInputs = [] }) {
  const name = path.basename(entry).replace(/\.[cm]?ts$/, '');
  const manifestFile = path.join(outDir, `${name}.manifest.json`);
  const options = {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    ...(external ? { external } : { packages: 'external' }),
    tsconfig,
    absWorkingDir: root,
    write: false,
    outdir: outDir,
    logLevel: 'error',
  };
  const require = createRequire(import.meta.url);
  const key = JSON.stringify({
    esbuild: JSON.parse(readFileSync(require.resolve('esbuild/package.json'), 'utf8')).version,
    options: {
      ...options,
      entryPoints: [path.relative(root, entry)],
      tsconfig: null,
      absWorkingDir: null,
      outdir: null,
    },
    tsconfig: hash(readFileSync(tsconfig)),
    extra: extraInputs.map((f) => [path.relative(root, f), hash(readFileSync(f))]),
  });

  const manifest = readManifest(manifestFile);
  if (manifest?.key === key && sourcesUnchanged(root, manifest.inputs)) {
    return path.join(outDir, manifest.bundle);
  }

  const { build } = await import('esbuild');
  const inputs = {};
  const result = await build({
    ...options,
    plugins: [
      {
        name: 'record-inputs',
        setup(b) {
          // Each source hashed as esbuild reads it: the manifest describes exactly what was bundled.
          b.onLoad({ filter: /.*/, namespace: 'file' }, (args) => {
            const contents = readFileSync(args.path);
            const pkg = packageJsonOf(args.path);
            if (pkg) inputs[path.relative(root, pkg)] ??= hash(readFileSync(pkg));
            else inputs[path.relative(root, args.path)] = hash(contents);
            return { contents, loader: LOADERS[path.extname(args.path)] ?? 'default' };
          });
        },
      },
    ],
  });
  const [output] = result.outputFiles;
  const bundle = `${name}.${hash(JSON.stringify({ key, inputs })).slice(0, 16)}.cjs`;
  mkdirSync(outDir, { recursive: true });
  const suffix = `.${process.pid}.tmp`;
  writeFileSync(path.join(outDir, bundle) + suffix, output.contents);
  renameSync(path.join(outDir, bundle) + suffix, path.join(outDir, bundle));
  writeFileSync(manifestFile + suffix, JSON.stringify({ key, bundle, inputs }));
  renameSync(manifestFile + suffix, manifestFile);
  removeOldBundles(outDir, name, bundle);
  return path.join(outDir, bundle);
}

/** The package.json of the package a file under node_modules belongs to; undefined elsewhere. */
function packageJsonOf(file) {
  const parts = file.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const name = parts[at + 1]?.startsWith('@') ? 2 : 1;
  return [...parts.slice(0, at + 1 + name), 'package.json'].join(path.sep);
}

function readManifest(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function sourcesUnchanged(root, inputs) {
  try {
    return Object.entries(inputs).every(
      ([file, h]) => hash(readFileSync(path.join(root, file))) === h,
    );
  } catch {
    return false; // a source file was removed or renamed
  }
}

/** Bundles of earlier sources, once no start can still be about to load them. */
function removeOldBundles(outDir, name, current) {
  const now = Date.now();
  for (const file of readdirSync(outDir)) {
    if (file === current || !file.startsWith(`${name}.`) || !file.endsWith('.cjs')) continue;
    try {
      if (now - statSync(path.join(outDir, file)).mtimeMs > KEEP_OLD_MS)
        unlinkSync(path.join(outDir, file));
    } catch {
      // removed by another build meanwhile
    }
  }
}
