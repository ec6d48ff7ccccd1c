import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../../../..');

/**
 * Runs a TypeScript program of the workspace in its own Node process, as a person would run it,
 * and returns its exit code and the tail of its output.
 */
export function runTs(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.base.json'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return new Promise((done) => child.on('exit', (code) => done({ code, output })));
}

/** Like runTs, but a non-zero exit is an error carrying the program's output. */
export async function runTsOrThrow(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<void> {
  const { code, output } = await runTs(entry, args, env);
  if (code !== 0) throw new Error(`${entry} ${args.join(' ')} exited ${code}:\n${output}`);
}

/** Writes a deterministic synthetic upstream file with the sample-data generator's CLI. */
export function generateSynthetic(
  dataset: string,
  count: number,
  out: string,
  changeShare = 0,
): Promise<void> {
  return runTsOrThrow('tools/refsync-sample-data/src/synthetic.ts', [
    '--dataset',
    dataset,
    '--count',
    String(count),
    '--out',
    out,
    '--change-share',
    String(changeShare),
  ]);
}
