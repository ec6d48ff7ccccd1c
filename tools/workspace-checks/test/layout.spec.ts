/**
 * Where tests live: every project keeps its specs in `test/`, beside `src/`, so that `src/` holds
 * only what ships and a reader of a folder sees one kind of file. The Jest preset runs only
 * `test/**\/*.spec.ts`, so a spec left in `src/` would silently never run: this check names it.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(__dirname, '../../..');

describe('workspace layout', () => {
  it('when the tree is listed, then no spec file lives under a src/ folder', () => {
    const tracked = execFileSync(
      'git',
      ['ls-files', '--cached', '--others', '--exclude-standard'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    ).split('\n');
    const misplaced = tracked.filter((path) => /(^|\/)src\/.*\.spec\.ts$/.test(path));
    expect(misplaced).toEqual([]);
  });
});
