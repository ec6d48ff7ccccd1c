// The CLI: `npm run mongo-server -- --port <n> [--host <h>] [--data-file <path>]` starts the server,
// logs JSON with pino, and stops cleanly on SIGTERM/SIGINT with the data file flushed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { serverNodeArgs } from '../src/process';

const ROOT = path.resolve(__dirname, '../../..');

interface Running {
  child: ChildProcess;
  uri: string;
  lines: Array<Record<string, unknown>>;
}

function runCli(args: string[]): Promise<Running> {
  // As `npm run mongo-server` runs it (package.json's script).
  const child = spawn(process.execPath, [...serverNodeArgs(), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const parsed = JSON.parse(line) as Record<string, unknown>;
        lines.push(parsed);
        if (parsed['msg'] === 'ready') resolve({ child, uri: String(parsed['uri']), lines });
      }
    });
    child.on('exit', (code) => reject(new Error(`CLI exited early with ${code}: ${stderr}`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('CLI', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mongo-server-cli-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('when started with --port 0 and a data file, then it serves the driver, logs JSON and flushes on SIGTERM', async () => {
    const file = path.join(dir, 'cli.bson');
    const first = await runCli(['--port', '0', '--host', '127.0.0.1', '--data-file', file]);
    expect(first.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+$/);
    expect(
      first.lines.every((l) => typeof l['level'] === 'number' && typeof l['time'] === 'number'),
    ).toBe(true);
    const client = new MongoClient(first.uri);
    await client.connect();
    await client.db('cli').collection('c').insertOne({ hello: 'world' });
    await client.close();
    const code = exited(first.child);
    first.child.kill('SIGTERM');
    expect(await code).toBe(0);

    const second = await runCli(['--port', '0', '--data-file', file]);
    const again = new MongoClient(second.uri);
    await again.connect();
    expect(
      await again
        .db('cli')
        .collection('c')
        .findOne({}, { projection: { _id: 0 } }),
    ).toEqual({ hello: 'world' });
    await again.close();
    const code2 = exited(second.child);
    second.child.kill('SIGINT');
    expect(await code2).toBe(0);
  });

  it('when given an unknown flag, then it exits with usage and status 2', async () => {
    const child = spawn(process.execPath, [...serverNodeArgs(), '--frobnicate'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    expect(await exited(child)).toBe(2);
    expect(stderr).toContain('usage:');
  });
});
