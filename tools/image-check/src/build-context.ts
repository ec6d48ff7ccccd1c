/**
 * The build context `docker build .` would send from this checkout, laid out in a folder: the
 * files a clean clone has (tracked, plus untracked ones git does not ignore, so that work not yet
 * committed is checked too), less what `.dockerignore` excludes.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import dockerignore from '@balena/dockerignore';

const run = promisify(execFile);

export async function buildContext(repository: string, into: string): Promise<string[]> {
  const { stdout } = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate'],
    { cwd: repository, maxBuffer: 64 * 1024 * 1024 },
  );
  const ignore = dockerignore().add(
    (await readFile(join(repository, '.dockerignore'), 'utf8').catch(() => '')).split('\n'),
  );
  const files = stdout
    .split('\0')
    .filter((file) => file !== '')
    .filter(ignore.createFilter());
  for (const file of files) {
    await mkdir(dirname(join(into, file)), { recursive: true });
    // A tracked file deleted in the working tree is not in the context either.
    await copyFile(join(repository, file), join(into, file)).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      },
    );
  }
  return files;
}
