import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');

describe('privacy-sample-data command', () => {
  it('when NODE_ENV is production, then it refuses with exit 2 before connecting anywhere', () => {
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(root, 'tools/privacy-sample-data/src/main.ts')],
      {
        cwd: root,
        env: {
          ...process.env,
          TSX_TSCONFIG_PATH: join(root, 'tsconfig.base.json'),
          NODE_ENV: 'production',
          // Nothing listens here: a connection attempt would fail differently (exit 1).
          MONGO_URL: 'mongodb://127.0.0.1:1/nhp',
        },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('refusing');
  });
});
