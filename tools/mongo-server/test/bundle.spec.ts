// bundle.mjs, which `npm run mongo-server` and startServerProcess start the server through: a
// source change is always bundled before the next start, even when the file's size and time stay
// the same, and an unchanged source reuses the bundle.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const BUNDLE_MJS = path.resolve(__dirname, '../bundle.mjs');

/** Bundles `entry.ts` in `dir` in a process of its own and runs it; its output and the bundle's path. */
function bundleAndRun(dir: string): { printed: string; bundle: string } {
  const script = `
    import { createRequire } from 'node:module';
    import { ensureBundle } from ${JSON.stringify(BUNDLE_MJS)};
    const dir = ${JSON.stringify(dir)};
    const file = await ensureBundle({
      root: dir,
      entry: dir + '/entry.ts',
      outDir: dir + '/out',
      tsconfig: dir + '/tsconfig.json',
    });
    console.log(file);
    createRequire(import.meta.url)(file);
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`bundling failed: ${run.stderr}`);
  const [bundle = '', printed = ''] = run.stdout.trim().split('\n');
  return { printed, bundle };
}

describe('bundle.mjs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mongo-server-bundle-'));
    writeFileSync(path.join(dir, 'tsconfig.json'), '{}');
    writeFileSync(
      path.join(dir, 'entry.ts'),
      "import { value } from './value';\nconsole.log(value);\n",
    );
    writeFileSync(path.join(dir, 'value.ts'), 'export const value: string = "one";\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('when an imported source changes with the same size and time, then the next run bundles the new one', () => {
    const first = bundleAndRun(dir);
    expect(first.printed).toBe('one');
    const value = path.join(dir, 'value.ts');
    const { atime, mtime } = statSync(value);
    writeFileSync(value, 'export const value: string = "two";\n');
    utimesSync(value, atime, mtime);

    const second = bundleAndRun(dir);
    expect(second.printed).toBe('two');
    expect(second.bundle).not.toBe(first.bundle);
  });

  it('when no source changed, then the next run loads the same bundle without rebuilding it', () => {
    const first = bundleAndRun(dir);
    const built = statSync(first.bundle).mtimeMs;
    const second = bundleAndRun(dir);
    expect(second).toEqual(first);
    expect(statSync(second.bundle).mtimeMs).toBe(built);
  });
});
