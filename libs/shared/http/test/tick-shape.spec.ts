import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepTickObjectShape, keptTickObject } from '../src/tick-shape';

const ROOT = join(__dirname, '../../../..');

/**
 * A process that queues ticks with a full garbage collection between turns (when no tick object is
 * alive), then prints the inline-cache states of nextTick's object literal (V8's %DebugPrint).
 */
function literalCacheStates(keep: boolean): string[] {
  const script = `
    ${keep ? "require('./libs/shared/http/src/tick-shape.ts').keepTickObjectShape();" : ''}
    (async () => {
      for (let i = 0; i < 10; i++) {
        for (let j = 0; j < 20; j++) await new Promise((r) => process.nextTick(r));
        await new Promise((r) => setImmediate(r));
        gc();
      }
      %DebugPrint(process.nextTick);
    })();
  `;
  // V8 prints through C's buffered stdout, which does not always reach a pipe whole before the
  // process exits: the child writes to a file.
  const dir = mkdtempSync(join(tmpdir(), 'tick-shape-'));
  const file = join(dir, 'out.txt');
  const out = openSync(file, 'w');
  try {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--allow-natives-syntax', '--expose-gc', '-e', script],
      { cwd: ROOT, stdio: ['ignore', out, 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(run.status).toBe(0);
  } finally {
    closeSync(out);
  }
  const printed = readFileSync(file, 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1] ?? '');
}

describe('keepTickObjectShape', () => {
  it('when called, then an object with the two async id symbols of Node’s tick objects is kept, and calling again keeps the same', () => {
    keepTickObjectShape();
    const first = keptTickObject();
    expect(Object.getOwnPropertySymbols(first).map((s) => s.description)).toEqual([
      'async_id_symbol',
      'trigger_async_id_symbol',
    ]);
    keepTickObjectShape();
    expect(keptTickObject()).toBe(first);
  });

  it('when full collections fall between ticks, then nextTick’s literal stays monomorphic with a tick object kept, and goes megamorphic without (Node 20)', () => {
    const kept = literalCacheStates(true);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((state) => state === 'MONOMORPHIC')).toBe(true);
    // Why the workaround exists; should a Node release stop collecting these maps, this says so.
    if (process.versions.node.startsWith('20.')) {
      expect(literalCacheStates(false)).toContain('MEGAMORPHIC');
    }
  }, 60_000);
});
