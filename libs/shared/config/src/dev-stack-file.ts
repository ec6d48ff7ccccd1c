import { readFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';

/**
 * Where `npm start` (tools/dev-stack) says what it runs, so that the operators' tools
 * (privacy-admin, privacy-mirror, privacy-token, ...) find its MongoDB and NATS without the user
 * copying URLs: it picks free ports for both, and a tool that fell back on its default
 * `nats://127.0.0.1:4222` would announce a change to no one (or to another stack).
 *
 * The file lives in the development data folder (DEV_DATA_DIR, default `.data` in the working
 * directory, as the development key does); it is written once the stack is up and removed when it
 * stops. A file left by a stack that died is ignored: its process is gone.
 */
export const DEV_STACK_FILE = 'dev-stack.json';

const devStackSchema = z.strictObject({
  format: z.literal('dev-stack/1'),
  /** The `npm start` process: the file counts only while it runs. */
  pid: z.number().int().positive(),
  startedAt: z.string(),
  mongoUrl: z.string().min(1),
  /** One server, or a cluster's servers comma-separated. */
  natsUrl: z.string().min(1),
  /** privacy-api's first instance. */
  privacyApiUrl: z.string().min(1).optional(),
  /** The issuer privacy-api trusts (`PRIVACY_AUTH_ISSUER`), when the stack chose it. */
  privacyAuthIssuer: z.string().min(1).optional(),
});

export type DevStack = z.infer<typeof devStackSchema>;

/** The data folder `npm start` and the development tools share. */
export function devDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env['DEV_DATA_DIR'] ?? '.data');
}

export function devStackFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(devDataDir(env), DEV_STACK_FILE);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What the running `npm start` wrote, or undefined: no file, a file that is not ours, or one left
 * by a stack that is no longer running. Synchronous: a command line reads it once at start.
 */
export function readDevStack(env: NodeJS.ProcessEnv = process.env): DevStack | undefined {
  let text: string;
  try {
    text = readFileSync(devStackFilePath(env), 'utf8');
  } catch {
    return undefined;
  }
  let parsed;
  try {
    parsed = devStackSchema.safeParse(JSON.parse(text));
  } catch {
    return undefined;
  }
  if (!parsed.success || !isRunning(parsed.data.pid)) return undefined;
  return parsed.data;
}

/** Written through a temporary file and a rename, so a reader never sees half of it. */
export async function writeDevStack(
  dir: string,
  stack: Omit<DevStack, 'format' | 'pid' | 'startedAt'>,
): Promise<string> {
  const file = join(dir, DEV_STACK_FILE);
  const content: DevStack = {
    format: 'dev-stack/1',
    pid: process.pid,
    startedAt: new Date().toISOString(),
    ...stack,
  };
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(content, null, 2)}\n`);
  await rename(tmp, file);
  return file;
}

/** Removes the file if this process wrote it (another stack may have replaced it since). */
export async function removeDevStack(dir: string): Promise<void> {
  const file = join(dir, DEV_STACK_FILE);
  try {
    const held = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown };
    if (held.pid !== process.pid) return;
  } catch {
    return;
  }
  await rm(file, { force: true });
}

/** Where a tool's MongoDB or NATS URL came from, for what it says when it cannot reach it. */
export interface ResolvedUrl {
  url: string;
  from: string;
}

/**
 * A tool's MongoDB or NATS URL: the variable when set, else the running `npm start`'s, else the
 * default. `from` names the source (e.g. `NATS_URL`, `npm start (.data/dev-stack.json)`).
 */
export function devStackUrl(
  kind: 'mongo' | 'nats',
  fallback: string,
  env: NodeJS.ProcessEnv = process.env,
  given?: { value: string | undefined; name: string },
): ResolvedUrl {
  const variable = kind === 'mongo' ? 'MONGO_URL' : 'NATS_URL';
  const explicit = given?.value?.trim() ? given : { value: env[variable], name: variable };
  if (explicit.value?.trim()) return { url: explicit.value.trim(), from: explicit.name };
  const stack = readDevStack(env);
  if (stack) {
    return {
      url: kind === 'mongo' ? stack.mongoUrl : stack.natsUrl,
      from: `npm start (${devStackFilePath(env)})`,
    };
  }
  return { url: fallback, from: `the default; no ${variable} and no npm start running` };
}
