import { SYNC_COMPLETED_SUBJECT, type SyncCompletedEventData } from '@nhp/refsync-contracts';
import { AppError } from '@nhp/shared-errors';
import {
  isSyncAborted,
  runSync,
  syncAborted,
  type SyncAbortedError,
  type SyncOptions,
} from '../src';
import { MemorySource, MemoryStore } from './memory-store';

const tg = (id: string, name = `Group ${id}`, extra: object = {}) => ({ id, name, ...extra });
const rg = (id: string, code = '200') => ({
  id,
  legalBasis: {
    coding: [{ system: 'urn:oid:2.16.578.1.12.4.1.1.7427', code, display: '§5-14 §2' }],
  },
  indications: [
    {
      coding: [
        { system: 'urn:oid:2.16.578.1.12.4.1.1.7170', code: 'T90', display: 'Diabetes type 2' },
      ],
    },
  ],
  medicines: [],
});

function setup(treatment: unknown[], reimbursement: unknown[]) {
  const store = new MemoryStore();
  const sources = {
    treatmentGroup: new MemorySource(treatment, 'tg'),
    reimbursementGroup: new MemorySource(reimbursement, 'rg'),
  };
  const logs: Array<{ obj: object; msg?: string }> = [];
  const logger = {
    info: (obj: object, msg?: string) => logs.push({ obj, msg }),
    warn: () => undefined,
    error: () => undefined,
  };
  let run = 0;
  const sync = (options: Partial<SyncOptions> = {}) =>
    runSync(
      {
        store,
        sources,
        logger,
        buildEvent: (data, { id, time }) => ({
          id,
          subject: SYNC_COMPLETED_SUBJECT,
          payload: { id, data },
          createdAt: time,
        }),
      },
      { runId: `run-${++run}`, maxDeleteShare: 0.2, ...options },
    );
  return { store, sources, sync, logs };
}

const eventData = (payload: object) => (payload as { data: SyncCompletedEventData }).data;

describe('runSync', () => {
  it('when the first upstream arrives, then version 1 holds every item of both datasets and one event is recorded', async () => {
    const { store, sync } = setup([tg('T1'), tg('T2')], [rg('R1')]);
    const result = await sync();
    expect(result).toMatchObject({ outcome: 'committed', previousVersion: 0, committedVersion: 1 });
    expect(store.version).toBe(1);
    expect(store.active('treatmentGroup')).toEqual(['T1', 'T2']);
    expect(store.active('reimbursementGroup')).toEqual(['R1']);
    expect(store.outbox).toHaveLength(1);
    expect(store.outbox[0].id).toBe('refsync-sync-completed-1');
    expect(eventData(store.outbox[0].payload)).toMatchObject({
      previousVersion: 0,
      currentVersion: 1,
      changed: true,
      datasets: {
        treatmentGroup: { added: 2, updated: 0, deleted: 0, total: 2 },
        reimbursementGroup: { added: 1, total: 1 },
      },
      source: { treatmentGroup: 'memory://tg', reimbursementGroup: 'memory://rg' },
    });
  });

  it('when items are added, changed, deleted and reappear, then each kind is applied and counted', async () => {
    const { store, sources, sync } = setup(
      [tg('T1'), tg('T2'), tg('T3'), tg('T4'), tg('T5'), tg('T6')],
      [rg('R1'), rg('R2')],
    );
    await sync();
    sources.treatmentGroup.values = [
      tg('T1'),
      tg('T2', 'renamed'),
      tg('T3'),
      tg('T4'),
      tg('T5'),
      tg('T7'),
    ];
    const second = await sync();
    expect(second.datasets.treatmentGroup).toMatchObject({
      added: 1,
      changed: 1,
      deleted: 1,
      reappeared: 0,
      activeBefore: 6,
      activeAfter: 6,
    });
    expect(second.datasets.reimbursementGroup).toMatchObject({
      added: 0,
      changed: 0,
      deleted: 0,
      unchanged: 2,
    });
    expect(store.committed.treatmentGroup.get('T6')).toMatchObject({
      isDeleted: true,
      version: 2,
      data: tg('T6'),
    });

    sources.treatmentGroup.values = [
      tg('T1'),
      tg('T2', 'renamed'),
      tg('T3'),
      tg('T4'),
      tg('T5'),
      tg('T7'),
      tg('T6'),
    ];
    const third = await sync();
    expect(third.datasets.treatmentGroup).toMatchObject({ added: 0, reappeared: 1, deleted: 0 });
    expect(eventData(third.event?.payload ?? {}).datasets.treatmentGroup).toEqual({
      added: 1,
      updated: 0,
      deleted: 0,
      total: 7,
    });
    expect(store.committed.treatmentGroup.get('T6')).toMatchObject({
      isDeleted: false,
      version: 3,
    });
  });

  it('when upstream resends the same data with other key order, then nothing is committed and a zero-count event is recorded', async () => {
    const { store, sources, sync } = setup([tg('T1', 'x', { a: 1, b: 2 })], [rg('R1')]);
    await sync();
    sources.treatmentGroup.values = [{ b: 2, a: 1, name: 'x', id: 'T1' }];
    const result = await sync();
    expect(result).toMatchObject({
      outcome: 'unchanged',
      currentVersion: 1,
      committedVersion: null,
    });
    expect(store.version).toBe(1);
    expect(store.outbox).toHaveLength(2);
    expect(store.outbox[1].id).toBe('refsync-sync-completed-1-unchanged-run-2');
    expect(eventData(store.outbox[1].payload)).toMatchObject({
      changed: false,
      currentVersion: 1,
      datasets: { treatmentGroup: { added: 0, updated: 0, deleted: 0, total: 1 } },
    });
  });

  it('when upstream elements are byte-for-byte what was committed, then they are recognised by their source hash without being parsed', async () => {
    const { store, sources, sync } = setup([tg('T1'), tg('T2'), tg('T3')], [rg('R1'), rg('R2')]);
    sources.treatmentGroup.withSourceHash = true;
    sources.reimbursementGroup.withSourceHash = true;
    await sync();
    expect(store.committed.treatmentGroup.get('T1')?.sourceHash).toEqual(expect.any(String));

    // Only the changed element is parsed; the stored source hash follows the new bytes.
    sources.treatmentGroup.values = [tg('T1'), tg('T2', 'renamed'), tg('T3')];
    sources.treatmentGroup.parsed = 0;
    sources.reimbursementGroup.parsed = 0;
    const second = await sync();
    expect(second.datasets.treatmentGroup).toMatchObject({ changed: 1, unchanged: 2 });
    expect(second.datasets.reimbursementGroup).toMatchObject({ unchanged: 2, changed: 0 });
    expect(sources.treatmentGroup.parsed).toBe(1);
    expect(sources.reimbursementGroup.parsed).toBe(0);
    const renamed = store.committed.treatmentGroup.get('T2');
    expect(renamed?.data).toEqual(tg('T2', 'renamed'));
    sources.treatmentGroup.values = [tg('T1'), tg('T2', 'renamed'), tg('T3')];
    sources.treatmentGroup.parsed = 0;
    expect((await sync()).outcome).toBe('unchanged');
    expect(sources.treatmentGroup.parsed).toBe(0);

    // A deleted item coming back with the same bytes is a reappearance, not "unchanged".
    sources.treatmentGroup.values = [tg('T1'), tg('T2', 'renamed')];
    const deleting = await sync({ allowMassDelete: true });
    expect(deleting.datasets.treatmentGroup).toMatchObject({ deleted: 1 });
    sources.treatmentGroup.values = [tg('T1'), tg('T2', 'renamed'), tg('T3')];
    expect((await sync()).datasets.treatmentGroup).toMatchObject({ reappeared: 1, unchanged: 2 });
    expect(store.active('treatmentGroup')).toEqual(['T1', 'T2', 'T3']);

    // The same bytes twice are the same id twice: a duplicate, reported, nothing committed.
    sources.treatmentGroup.values = [tg('T1'), tg('T2', 'renamed'), tg('T3'), tg('T1')];
    const duplicated = await sync().catch((err: unknown) => err);
    expect(isSyncAborted(duplicated)).toBe(true);
    expect((duplicated as SyncAbortedError).details.report?.duplicateIds).toEqual([
      { dataset: 'treatmentGroup', id: 'T1', positions: [1, 4] },
    ]);
  });

  it('when a run logs, then its lines leave the run id to the run logger (it is bound there once)', async () => {
    const { sync, logs } = setup([tg('T1')], [rg('R1')]);
    await sync();
    expect(logs.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['change set computed', 'version committed']),
    );
    for (const { obj } of logs) expect(obj).not.toHaveProperty('runId');
  });

  it('when items are invalid or ids repeat, then nothing is written and the report names each one', async () => {
    const { store, sync } = setup(
      [tg('T1'), { id: 'T2' }, tg('T1', 'again'), 'not an object'],
      [rg('R1'), { ...rg('R2'), extra: true }],
    );
    const error = await sync().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(isSyncAborted(error)).toBe(true);
    const aborted = error as SyncAbortedError;
    expect(aborted.details.reason).toBe('invalid_upstream');
    expect(aborted.code).toBe('SYNC_INVALID_UPSTREAM');
    expect(aborted.details.report?.invalidItems).toEqual([
      expect.objectContaining({
        dataset: 'treatmentGroup',
        index: 2,
        id: 'T2',
        reasons: [expect.stringMatching(/^name:/)],
      }),
      expect.objectContaining({ dataset: 'treatmentGroup', index: 4 }),
      expect.objectContaining({
        dataset: 'reimbursementGroup',
        index: 2,
        id: 'R2',
        reasons: [expect.stringMatching(/extra/)],
      }),
    ]);
    expect(aborted.details.report?.duplicateIds).toEqual([
      { dataset: 'treatmentGroup', id: 'T1', positions: [1, 3] },
    ]);
    expect(aborted.message).toMatch(/treatmentGroup item #2 id "T2": name:/);
    expect(aborted.message).toMatch(/duplicate id "T1" at items #1, #3/);
    expect(store.version).toBe(0);
    expect(store.staged).toEqual([]);
    expect(store.stageCalls).toEqual([]);
    expect(store.outbox).toEqual([]);
  });

  it('when most items are unchanged since the commit, then a repeated unchanged id and an invalid changed item are still reported', async () => {
    // Unchanged items skip the contract check (their committed hash vouches for them); duplicates
    // and changed items must not slip through with them.
    const thirty = Array.from({ length: 30 }, (_, i) => tg(`T${i}`));
    const { store, sources, sync } = setup(thirty, [rg('R1')]);
    await sync();
    sources.treatmentGroup.values = [...thirty.slice(0, 29), tg('T0'), { id: 'T29', name: '' }];
    const error = await sync().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(isSyncAborted(error)).toBe(true);
    const aborted = error as SyncAbortedError;
    expect(aborted.details.reason).toBe('invalid_upstream');
    expect(aborted.code).toBe('SYNC_INVALID_UPSTREAM');
    expect(aborted.details.report?.invalidItems).toEqual([
      expect.objectContaining({
        dataset: 'treatmentGroup',
        index: 31,
        id: 'T29',
        reasons: [expect.stringMatching(/^name:/)],
      }),
    ]);
    expect(aborted.details.report?.duplicateIds).toEqual([
      { dataset: 'treatmentGroup', id: 'T0', positions: [1, 30] },
    ]);
    expect(store.version).toBe(1);
  });

  it('when a run would delete more than the allowed share, then it aborts unless forced', async () => {
    const ten = Array.from({ length: 10 }, (_, i) => tg(`T${i}`));
    const { store, sources, sync } = setup(ten, [rg('R1')]);
    await sync();
    sources.treatmentGroup.values = ten.slice(0, 7);
    await expect(sync()).rejects.toMatchObject({
      code: 'SYNC_MASS_DELETION',
      details: { reason: 'mass_deletion' },
      message: expect.stringMatching(/3 of 10.*--allow-mass-delete/),
    });
    expect(store.version).toBe(1);
    expect(store.active('treatmentGroup')).toHaveLength(10);

    sources.treatmentGroup.values = ten.slice(0, 8); // exactly 20%: allowed
    await expect(sync()).resolves.toMatchObject({ outcome: 'committed' });
    sources.treatmentGroup.values = ten.slice(0, 2);
    await expect(sync({ allowMassDelete: true })).resolves.toMatchObject({
      outcome: 'committed',
      committedVersion: 3,
    });
    expect(store.active('treatmentGroup')).toEqual(['T0', 'T1']);
  });

  it('when upstream is empty, then the data is never wiped, even when forced', async () => {
    const { store, sources, sync } = setup([tg('T1')], [rg('R1')]);
    await sync();
    sources.reimbursementGroup.values = [];
    await expect(sync({ allowMassDelete: true })).rejects.toMatchObject({
      code: 'SYNC_EMPTY_UPSTREAM',
      details: { reason: 'empty_upstream' },
    });
    expect(store.active('reimbursementGroup')).toEqual(['R1']);
  });

  it('when it is a dry run, then the change ids are returned and nothing is written', async () => {
    const { store, sources, sync } = setup([tg('T1'), tg('T2')], [rg('R1')]);
    await sync();
    sources.treatmentGroup.values = [tg('T1', 'new name'), tg('T3')];
    const result = await sync({ dryRun: true });
    expect(result.outcome).toBe('dry-run');
    expect(result.changes?.treatmentGroup).toEqual({
      added: ['T3'],
      changed: ['T1'],
      reappeared: [],
      deleted: ['T2'],
    });
    expect(result.blockedBy).toEqual([expect.stringMatching(/would delete 1 of 2/)]);
    expect(store.version).toBe(1);
    expect(store.outbox).toHaveLength(1);
  });

  it('when the upstream changes between the validating and the staging pass, then the run aborts uncommitted', async () => {
    const { store, sources, sync } = setup([tg('T1')], [rg('R1')]);
    sources.treatmentGroup.onRead = (pass) => {
      if (pass === 2) sources.treatmentGroup.values = [tg('T1', 'sneaky')];
    };
    // More changes than may be kept in memory: staged from a second pass, which checks each hash.
    await expect(sync({ maxBufferedChanges: 0 })).rejects.toMatchObject({
      code: 'SYNC_UPSTREAM_CHANGED',
      details: { reason: 'upstream_changed' },
    });
    expect(store.version).toBe(0);
  });

  it('when the changes fit in memory, then each upstream file is read once; when they do not, twice, with the same result', async () => {
    const reads: number[] = [];
    const { store, sources, sync } = setup([tg('T1'), tg('T2')], [rg('R1')]);
    sources.treatmentGroup.onRead = (pass) => reads.push(pass);
    await sync();
    expect(reads).toEqual([1]);
    sources.treatmentGroup.values = [tg('T1', 'ny'), tg('T2'), tg('T3')];
    reads.length = 0;
    await sync({ maxBufferedChanges: 1 });
    expect(reads).toEqual([1, 2]);
    expect(store.committed.treatmentGroup.get('T1')).toMatchObject({
      data: tg('T1', 'ny'),
      version: 2,
    });
    expect(store.active('treatmentGroup')).toEqual(['T1', 'T2', 'T3']);
  });

  it('when there are many changes, then they are staged in batches no larger than the batch size', async () => {
    const many = Array.from({ length: 2500 }, (_, i) => tg(`T${i}`));
    const { store, sync } = setup(many, [rg('R1')]);
    await sync({ batchSize: 1000 });
    expect(store.stageCalls).toEqual([1000, 1000, 500, 1]);
    expect(store.active('treatmentGroup')).toHaveLength(2500);
  });

  it('when the commit fails after staging, then readers keep the old version and the next run converges', async () => {
    const { store, sources, sync } = setup([tg('T1')], [rg('R1')]);
    await sync();
    sources.treatmentGroup.values = [tg('T1'), tg('T2')];
    store.failCommit = true;
    await expect(sync()).rejects.toThrow(/injected/);
    expect(store.version).toBe(1);
    expect(store.staged.length).toBeGreaterThan(0);
    store.failCommit = false;
    await expect(sync()).resolves.toMatchObject({ outcome: 'committed', committedVersion: 2 });
    expect(store.active('treatmentGroup')).toEqual(['T1', 'T2']);
  });

  it('when the lease is lost before the commit, then nothing is committed', async () => {
    const { store, sources } = setup([tg('T1')], [rg('R1')]);
    const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
    await expect(
      runSync(
        {
          store,
          sources,
          logger,
          buildEvent: (data, { id, time }) => ({
            id,
            subject: 's',
            payload: data,
            createdAt: time,
          }),
          assertLeader: async () => {
            throw syncAborted('lease_lost', 'lease taken over');
          },
        },
        { runId: 'r', maxDeleteShare: 0.2 },
      ),
    ).rejects.toMatchObject({ code: 'SYNC_LEASE_LOST', details: { reason: 'lease_lost' } });
    expect(store.version).toBe(0);
  });

  it('when an upstream cannot be opened, then the run aborts as upstream_unavailable', async () => {
    const { store, sources, sync } = setup([tg('T1')], [rg('R1')]);
    sources.reimbursementGroup.open = async () => {
      throw new Error('HTTP 503');
    };
    await expect(sync()).rejects.toMatchObject({
      code: 'SYNC_UPSTREAM_UNAVAILABLE',
      details: { reason: 'upstream_unavailable' },
      message: 'reimbursementGroup: HTTP 503',
    });
    expect(store.version).toBe(0);
  });
});
