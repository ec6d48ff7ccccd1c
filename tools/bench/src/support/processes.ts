import type { ChildProcess } from 'node:child_process';
import { spawnNode } from './paired';
import { ROOT } from './programs';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `node <args>` in its own process, on `cpus` when given, behind `prefix` (spawnNode). */
export function spawnProgram(
  args: string[],
  env: Record<string, string>,
  cpus?: string,
  prefix?: string[],
): ChildProcess {
  const child = spawnNode(
    args,
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      // PRIVACY_BENCH_LOGS=1 shows the programs' own log lines (to see why a run failed).
      stdio: ['ignore', process.env['PRIVACY_BENCH_LOGS'] === '1' ? 'inherit' : 'ignore', 'pipe'],
    },
    cpus,
    prefix,
  );
  let errors = '';
  child.stderr?.on('data', (c: Buffer) => (errors = (errors + c.toString()).slice(-4000)));
  child.on('exit', (code) => {
    if (code && code !== 0 && !child.killed)
      process.stderr.write(`${args[0]} exited ${code}\n${errors}`);
  });
  return child;
}

/** SIGTERM, and SIGKILL if the process is still there 5 s later. */
export async function stopProgram(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** Resolves once `url` answers (below 500, or anything with `anyStatus`); throws after 30 s. */
export async function waitForUrl(url: string, what: string, anyStatus = false): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(url)
      .then((r) => anyStatus || r.status < 500)
      .catch(() => false);
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`${what} did not come up at ${url}`);
}
