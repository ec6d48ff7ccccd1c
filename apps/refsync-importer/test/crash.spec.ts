import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { refsyncModels } from '@nhp/refsync-data-access';
import { useTestInfra } from '@nhp/shared-testing';
import type { ImporterContext } from '../src/context';
import { PAUSED_AFTER_STAGE } from '../src/hooks';
import {
  eventually,
  ids,
  readerView,
  rg,
  startContext,
  testConfig,
  tg,
  useUpstreamFiles,
  writeUpstream,
} from './helpers';

const infra = useTestInfra();
const repoRoot = resolve(__dirname, '../../..');

describe('crash safety', () => {
  const files = useUpstreamFiles();
  const { contexts } = files;

  async function prepare(name: string) {
    const tgUrl = await writeUpstream(files.dir, `${name}-tg.json`, [
      tg('T1'),
      tg('T2'),
      tg('T3'),
      tg('T4'),
      tg('T5'),
    ]);
    const rgUrl = await writeUpstream(files.dir, `${name}-rg.json`, [rg('R1')]);
    const env = {
      REFSYNC_SOURCE_TREATMENT_GROUP: tgUrl,
      REFSYNC_SOURCE_REIMBURSEMENT_GROUP: rgUrl,
    };
    const config = testConfig(infra.get(), env);
    const ctx = await startContext(config, { connectToNats: false });
    contexts.push(ctx);
    expect((await ctx.importer.run({ trigger: 'cli' })).committedVersion).toBe(1);
    // version 2 would change T1, delete T5 and add T6
    await writeUpstream(files.dir, `${name}-tg.json`, [
      tg('T1', 'endret'),
      tg('T2'),
      tg('T3'),
      tg('T4'),
      tg('T6'),
    ]);
    return {
      ctx,
      config,
      env: { ...env, MONGO_URL: config.MONGO_URL, REFSYNC_LEASE_TTL_MS: '5000' },
    };
  }

  async function expectReadersOnVersion1(ctx: ImporterContext) {
    const view = await readerView(ctx.conn);
    expect(view.version).toBe(1);
    expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2', 'T3', 'T4', 'T5']);
    expect(view.treatmentGroup.find((i) => i.id === 'T1')).toEqual(tg('T1'));
    expect(
      await view.reader.listItems('treatmentGroup', { atVersion: 1, sinceVersion: 1 }),
    ).toEqual([]);
  }

  async function expectConverged(ctx: ImporterContext) {
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report).toMatchObject({ outcome: 'committed', previousVersion: 1, committedVersion: 2 });
    expect(report.datasets?.treatmentGroup).toMatchObject({ added: 1, changed: 1, deleted: 1 });
    const view = await readerView(ctx.conn);
    expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2', 'T3', 'T4', 'T6']);
    const diff = await view.reader.listItems('treatmentGroup', { atVersion: 2, sinceVersion: 1 });
    expect(diff).toHaveLength(3);
    const { Item } = refsyncModels(ctx.conn);
    // exactly one document per item and version: nothing of the crashed run is left over
    expect(await Item.countDocuments({ dataset: 'treatmentGroup', version: 2 })).toBe(3);
  }

  it('when the commit fails after the change set was staged, then readers stay on the old version and the next run converges', async () => {
    const { ctx } = await prepare('injected');

    const crashing = await startContext(
      testConfig(
        infra.get(),
        {
          REFSYNC_SOURCE_TREATMENT_GROUP: ctx.sources.treatmentGroup.description,
          REFSYNC_SOURCE_REIMBURSEMENT_GROUP: ctx.sources.reimbursementGroup.description,
        },
        mongoUriOf(ctx),
      ),
      {
        connectToNats: false,
        afterStaged: async () => {
          throw new Error('injected failure between staging and commit');
        },
      },
    );
    contexts.push(crashing);
    const report = await crashing.importer.run({ trigger: 'cli' });
    expect(report).toMatchObject({
      outcome: 'failed',
      error: { message: expect.stringMatching(/injected/) },
    });
    const { Item } = refsyncModels(ctx.conn);
    expect(await Item.countDocuments({ version: 2 })).toBeGreaterThan(0); // staged, not committed
    await expectReadersOnVersion1(ctx);
    await expectConverged(ctx);
  });

  it('when the importer process is killed between staging and committing, then readers never see it and the next run converges', async () => {
    const { ctx, env } = await prepare('killed');
    const child = spawn(
      // node --import tsx, not the tsx CLI: the CLI runs the script in a grandchild that SIGKILL would miss.
      process.execPath,
      ['--import', 'tsx', 'apps/refsync-importer/src/main.ts', '--once'],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          ...env,
          NODE_ENV: 'test',
          NATS_URL: infra.get().natsUrl,
          LOG_LEVEL: 'warn',
          REFSYNC_IMPORTER_TEST_HOOK: 'pause-after-stage',
          TSX_TSCONFIG_PATH: resolve(repoRoot, 'tsconfig.base.json'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | number | null>((done) =>
      child.on('exit', (code, signal) => done(signal ?? code)),
    );
    await new Promise<void>((done, fail) => {
      const check = () => {
        if (stdout.includes(PAUSED_AFTER_STAGE)) done();
        else if (child.exitCode !== null)
          fail(new Error(`importer exited early (${child.exitCode}): ${stdout}\n${stderr}`));
        else setTimeout(check, 50);
      };
      check();
    });
    expect(stdout).toContain('version=2');
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const { Item } = refsyncModels(ctx.conn);
    expect(await Item.countDocuments({ version: 2 })).toBeGreaterThan(0); // the killed run had staged
    await expectReadersOnVersion1(ctx);
    const [killedRun] = await ctx.runs.recent(1);
    expect(killedRun.outcome).toBe('running');

    // The dead process still holds the lease until it expires; then the next run may proceed.
    const skipped = await ctx.importer.run({ trigger: 'cli' });
    expect(skipped.outcome).toBe('skipped');
    await eventually(async () => {
      const lease = await ctx.leases.current();
      return lease !== null && lease.expiresAt.getTime() <= Date.now();
    }, "the killed importer's lease to expire");

    await expectConverged(ctx);
    expect((await ctx.runs.get(killedRun.runId))?.outcome).toBe('interrupted');
  }, 60_000);
});

function mongoUriOf(ctx: ImporterContext): string {
  const { host, port, name } = ctx.conn;
  return `mongodb://${host}:${port}/${name}`;
}
