import { createLogger } from '@nhp/shared-logger';
import { Scrape, useTestInfra } from '@nhp/shared-testing';
import {
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

describe('importer sync (file sources, real MongoDB wire protocol)', () => {
  const files = useUpstreamFiles();
  const { contexts } = files;

  async function setup(
    name: string,
    treatment: unknown[],
    reimbursement: unknown[],
    format: 'array' | 'ndjson' = 'array',
  ) {
    const tgUrl = await writeUpstream(files.dir, `${name}-tg.json`, treatment, format);
    const rgUrl = await writeUpstream(files.dir, `${name}-rg.json`, reimbursement, format);
    const ctx = await startContext(
      testConfig(infra.get(), {
        REFSYNC_SOURCE_TREATMENT_GROUP: tgUrl,
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: rgUrl,
      }),
      { connectToNats: false },
    );
    contexts.push(ctx);
    const rewrite = async (t: unknown[], r: unknown[]) => {
      await writeUpstream(files.dir, `${name}-tg.json`, t, format);
      await writeUpstream(files.dir, `${name}-rg.json`, r, format);
    };
    return { ctx, rewrite };
  }

  it.each(['array', 'ndjson'] as const)(
    'when upstream (%s) adds, changes, deletes and brings back items in both datasets, then each run commits the next version with exactly those changes',
    async (format) => {
      const { ctx, rewrite } = await setup(
        `lifecycle-${format}`,
        [tg('T1'), tg('T2'), tg('T3'), tg('T4'), tg('T5')],
        [rg('R1'), rg('R2'), rg('R3'), rg('R4'), rg('R5')],
        format,
      );

      const first = await ctx.importer.run({ trigger: 'cli' });
      expect(first).toMatchObject({
        outcome: 'committed',
        previousVersion: 0,
        committedVersion: 1,
      });
      let view = await readerView(ctx.conn);
      expect(view.version).toBe(1);
      expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2', 'T3', 'T4', 'T5']);
      expect(ids(view.reimbursementGroup)).toEqual(['R1', 'R2', 'R3', 'R4', 'R5']);

      // add T6, change T2, delete T5; in the other dataset change R1 and delete R5
      await rewrite(
        [tg('T1'), tg('T2', 'Nytt navn'), tg('T3'), tg('T4'), tg('T6')],
        [rg('R1', '300'), rg('R2'), rg('R3'), rg('R4')],
      );
      const second = await ctx.importer.run({ trigger: 'cli' });
      expect(second).toMatchObject({ outcome: 'committed', committedVersion: 2 });
      expect(second.datasets?.treatmentGroup).toMatchObject({
        added: 1,
        changed: 1,
        deleted: 1,
        reappeared: 0,
        unchanged: 3,
        activeAfter: 5,
      });
      expect(second.datasets?.reimbursementGroup).toMatchObject({
        added: 0,
        changed: 1,
        deleted: 1,
        activeAfter: 4,
      });
      view = await readerView(ctx.conn);
      expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2', 'T3', 'T4', 'T6']);
      expect(view.treatmentGroup.find((i) => i.id === 'T2')).toMatchObject({ name: 'Nytt navn' });
      const diff = await view.reader.listItems('treatmentGroup', { atVersion: 2, sinceVersion: 1 });
      expect(diff.map((i) => [(i.data as { id: string }).id, i.version, i.isDeleted])).toEqual([
        ['T2', 2, false],
        ['T5', 2, true],
        ['T6', 2, false],
      ]);
      expect(diff.find((i) => i.isDeleted)?.data).toEqual(tg('T5'));

      // T5 reappears
      await rewrite(
        [tg('T1'), tg('T2', 'Nytt navn'), tg('T3'), tg('T4'), tg('T6'), tg('T5')],
        [rg('R1', '300'), rg('R2'), rg('R3'), rg('R4')],
      );
      const third = await ctx.importer.run({ trigger: 'cli' });
      expect(third).toMatchObject({ outcome: 'committed', committedVersion: 3 });
      expect(third.datasets?.treatmentGroup).toMatchObject({
        added: 0,
        reappeared: 1,
        activeAfter: 6,
      });
      view = await readerView(ctx.conn);
      expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2', 'T3', 'T4', 'T5', 'T6']);

      // the same data again, keys reordered: nothing to commit, but the run and its event are recorded
      await rewrite(
        [tg('T1'), { name: 'Nytt navn', id: 'T2' }, tg('T3'), tg('T4'), tg('T6'), tg('T5')],
        [rg('R1', '300'), rg('R2'), rg('R3'), rg('R4')],
      );
      const fourth = await ctx.importer.run({ trigger: 'cli' });
      expect(fourth).toMatchObject({
        outcome: 'unchanged',
        previousVersion: 3,
        committedVersion: null,
      });
      expect((await readerView(ctx.conn)).version).toBe(3);
      const pending = await ctx.writeRepo.pendingEvents();
      expect(pending.map((e) => e.id)).toEqual([
        'refsync-sync-completed-1',
        'refsync-sync-completed-2',
        'refsync-sync-completed-3',
        `refsync-sync-completed-3-unchanged-${fourth.runId}`,
      ]);
      const history = await ctx.runs.recent(10);
      expect(history.map((r) => r.outcome)).toEqual([
        'unchanged',
        'committed',
        'committed',
        'committed',
      ]);
      expect(history[1]).toMatchObject({
        runId: third.runId,
        previousVersion: 2,
        committedVersion: 3,
        datasets: { treatmentGroup: expect.objectContaining({ reappeared: 1 }) },
      });
      expect(history[1].endedAt?.getTime()).toBeGreaterThanOrEqual(history[1].startedAt.getTime());
    },
  );

  it('when a run logs, then every JSON line of it carries the run id exactly once', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      name: 'refsync-importer-test',
      level: 'info',
      destination: { write: (line: string) => lines.push(line) },
    });
    const ctx = await startContext(
      testConfig(infra.get(), {
        REFSYNC_SOURCE_TREATMENT_GROUP: await writeUpstream(files.dir, 'log-tg.json', [tg('T1')]),
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: await writeUpstream(files.dir, 'log-rg.json', [
          rg('R1'),
        ]),
      }),
      { connectToNats: false, logger },
    );
    contexts.push(ctx);
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report.outcome).toBe('committed');

    const runLines = lines.filter((line) => line.includes(report.runId));
    const messages = runLines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(
      expect.arrayContaining(['run started', 'change set computed', 'version committed']),
    );
    for (const line of runLines) expect(line.match(/"runId":/g)).toHaveLength(1);
  });

  it('when an upstream item is invalid and another id repeats, then nothing is committed and the run record names both', async () => {
    const { ctx } = await setup(
      'invalid',
      [tg('T1'), { id: 'T2' }, tg('T1', 'igjen')],
      [rg('R1'), { ...rg('R2'), unexpected: 1 }],
    );
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report.outcome).toBe('aborted');
    expect(report.error?.reason).toBe('invalid_upstream');
    expect(report.error?.details).toEqual([
      expect.stringMatching(/^treatmentGroup item #2 \(line \d+\) id "T2": name: /),
      expect.stringMatching(/^reimbursementGroup item #2 \(line \d+\) id "R2": .*unexpected/),
      'treatmentGroup duplicate id "T1" at items #1, #3',
    ]);
    const view = await readerView(ctx.conn);
    expect(view.version).toBe(0);
    expect(view.treatmentGroup).toEqual([]);
    expect(await ctx.writeRepo.pendingEvents()).toEqual([]);
    const [run] = await ctx.runs.recent(1);
    expect(run).toMatchObject({ runId: report.runId, outcome: 'aborted', committedVersion: null });
    expect(run.error?.details).toHaveLength(3);
  });

  it('when a run would delete more than 20% of a dataset, then it aborts, and with allowMassDelete it commits', async () => {
    const ten = Array.from({ length: 10 }, (_, i) => tg(`T${i}`));
    const { ctx, rewrite } = await setup('mass', ten, [rg('R1')]);
    await ctx.importer.run({ trigger: 'cli' });
    await rewrite(ten.slice(0, 5), [rg('R1')]);
    const guarded = await ctx.importer.run({ trigger: 'cli' });
    expect(guarded).toMatchObject({
      outcome: 'aborted',
      previousVersion: 1,
      committedVersion: null,
      error: { reason: 'mass_deletion' },
    });
    expect(guarded.error?.message).toMatch(
      /delete 5 of 10 active items \(50\.0%\).*--allow-mass-delete/,
    );
    expect((await readerView(ctx.conn)).treatmentGroup).toHaveLength(10);

    // Counted by reason, so an alert can tell the guard from other aborts.
    const scrape = async () => new Scrape(await ctx.metrics.registry.metrics());
    let metrics = await scrape();
    const aborted = (reason: string) =>
      metrics.value('refsync_importer_aborted_runs_total', { reason });
    expect(aborted('mass_deletion')).toBe(1);
    expect(aborted('invalid_upstream')).toBe(0);
    expect(metrics.value('refsync_importer_runs_total', { outcome: 'aborted' })).toBe(1);

    const forced = await ctx.importer.run({ trigger: 'cli', allowMassDelete: true });
    expect(forced).toMatchObject({ outcome: 'committed', committedVersion: 2 });
    expect((await readerView(ctx.conn)).treatmentGroup).toHaveLength(5);
    // The last success is the forced run's end (this file's runs share one database).
    metrics = await scrape();
    expect(metrics.value('refsync_importer_last_success_timestamp_seconds')).toBe(
      forced.endedAt.getTime() / 1000,
    );
  });

  it('when the upstream file is empty or cut off, then the data is kept', async () => {
    const { ctx } = await setup('empty', [tg('T1'), tg('T2')], [rg('R1')]);
    await ctx.importer.run({ trigger: 'cli' });
    const { writeFile } = await import('node:fs/promises');
    const { fileURLToPath } = await import('node:url');
    const tgFile = fileURLToPath(ctx.sources.treatmentGroup.description);

    await writeFile(tgFile, '');
    const empty = await ctx.importer.run({ trigger: 'cli', allowMassDelete: true });
    expect(empty).toMatchObject({ outcome: 'aborted', error: { reason: 'empty_upstream' } });

    await writeFile(tgFile, '[{"id":"T1","name":"x"},{"id":"T2","na');
    const truncated = await ctx.importer.run({ trigger: 'cli' });
    expect(truncated.outcome).toBe('aborted');
    expect(truncated.error?.message).toMatch(/truncated/);

    const view = await readerView(ctx.conn);
    expect(view.version).toBe(1);
    expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2']);
  });

  it('when it is a dry run, then the change set is reported and nothing is written', async () => {
    const { ctx, rewrite } = await setup('dry', [tg('T1'), tg('T2')], [rg('R1')]);
    await ctx.importer.run({ trigger: 'cli' });
    await rewrite([tg('T1', 'endret'), tg('T3')], [rg('R1')]);
    const report = await ctx.importer.run({ trigger: 'cli', dryRun: true });
    expect(report.outcome).toBe('dry-run');
    expect(report.changes?.treatmentGroup).toEqual({
      added: ['T3'],
      changed: ['T1'],
      reappeared: [],
      deleted: ['T2'],
    });
    expect(report.blockedBy).toEqual([expect.stringMatching(/delete 1 of 2/)]);
    const view = await readerView(ctx.conn);
    expect(view.version).toBe(1);
    expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2']);
    expect(await ctx.writeRepo.pendingEvents()).toHaveLength(1);
  });
});
