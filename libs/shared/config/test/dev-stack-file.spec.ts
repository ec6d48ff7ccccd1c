import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_STACK_FILE, devStackUrl, readDevStack, removeDevStack, writeDevStack } from '../src';

const stack = { mongoUrl: 'mongodb://127.0.0.1:40001/nhp', natsUrl: 'nats://127.0.0.1:40002' };

describe('the dev stack file', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dev-stack-file-'));
    env = { DEV_DATA_DIR: dir };
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('when npm start has written it, then the tools take its URLs unless a variable is set', async () => {
    await writeDevStack(dir, stack);
    expect(readDevStack(env)).toMatchObject({ ...stack, pid: process.pid });
    expect(devStackUrl('nats', 'nats://127.0.0.1:4222', env)).toEqual({
      url: stack.natsUrl,
      from: `npm start (${join(dir, DEV_STACK_FILE)})`,
    });
    expect(devStackUrl('mongo', 'mongodb://x', env).url).toBe(stack.mongoUrl);
    expect(devStackUrl('nats', 'd', { ...env, NATS_URL: 'nats://elsewhere:1' })).toEqual({
      url: 'nats://elsewhere:1',
      from: 'NATS_URL',
    });
    expect(devStackUrl('nats', 'd', env, { value: 'nats://flag:2', name: '--nats' })).toEqual({
      url: 'nats://flag:2',
      from: '--nats',
    });
  });

  it('when the stack that wrote it is no longer running, then it is ignored and the default applies', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const file = join(dir, DEV_STACK_FILE);
    await writeDevStack(dir, stack);
    const held = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...held, pid: Number(gone.stdout.toString()) }));
    expect(readDevStack(env)).toBeUndefined();
    expect(devStackUrl('nats', 'nats://127.0.0.1:4222', env)).toEqual({
      url: 'nats://127.0.0.1:4222',
      from: 'the default; no NATS_URL and no npm start running',
    });
  });

  it('when the file is not one npm start wrote, then it is ignored', async () => {
    await writeFile(join(dir, DEV_STACK_FILE), '{"mongoUrl": 1');
    expect(readDevStack(env)).toBeUndefined();
    await writeFile(join(dir, DEV_STACK_FILE), JSON.stringify({ ...stack, pid: process.pid }));
    expect(readDevStack(env)).toBeUndefined();
  });

  it('when the stack stops, then it removes its own file and leaves another stack’s', async () => {
    await writeDevStack(dir, stack);
    await removeDevStack(dir);
    expect(readDevStack(env)).toBeUndefined();
    const other = { format: 'dev-stack/1', pid: 1, startedAt: 'x', ...stack };
    await writeFile(join(dir, DEV_STACK_FILE), JSON.stringify(other));
    await removeDevStack(dir);
    expect(JSON.parse(await readFile(join(dir, DEV_STACK_FILE), 'utf8'))).toEqual(other);
  });
});
