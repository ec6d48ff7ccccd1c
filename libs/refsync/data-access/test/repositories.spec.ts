import { SYNC_COMPLETED_SUBJECT, syncCompletedEventId, type Dataset } from '@nhp/refsync-contracts';
import { contentHash } from '@nhp/refsync-domain';
import { useTestInfra } from '@nhp/shared-testing';
import { AppError } from '@nhp/shared-errors';
import mongoose, { type Connection } from 'mongoose';
import {
  createRefsyncReadRepository,
  createRefsyncWriteRepository,
  ensureRefsyncIndexes,
  refsyncModels,
  REFSYNC_STAGING_REJECTED,
  REFSYNC_VERSION_CONFLICT,
  STAGE_BATCH_SIZE,
  type OutboxEvent,
  type RefsyncReadRepository,
  type RefsyncWriteRepository,
  type StagedItemChange,
} from '../src';

const infra = useTestInfra();
const conflict = { name: 'AppError', code: REFSYNC_VERSION_CONFLICT, status: 409 };
const staging = { name: 'AppError', code: REFSYNC_STAGING_REJECTED };
let conn: Connection;
let read: RefsyncReadRepository;
let write: RefsyncWriteRepository;

beforeAll(async () => {
  conn = await mongoose
    .createConnection(infra.get().mongoUri, {
      bufferCommands: false,
      serverSelectionTimeoutMS: 5000,
    })
    .asPromise();
  await ensureRefsyncIndexes(conn);
  read = createRefsyncReadRepository(conn);
  write = createRefsyncWriteRepository(conn);
});

afterAll(async () => {
  await conn?.close();
});

beforeEach(async () => {
  const { Item, State } = refsyncModels(conn);
  await Item.deleteMany({});
  await State.deleteMany({});
});

const tg = (id: string, name = `Group ${id}`) => ({ id, name, description: `about ${id}` });
const upsert = (id: string, name?: string): StagedItemChange => ({
  itemId: id,
  data: tg(id, name),
  isDeleted: false,
});
const remove = (id: string): StagedItemChange => ({ itemId: id, isDeleted: true });
const timeOf = (version: number) => new Date(Date.UTC(2026, 10, version, 2, 0, 3, 125));
const eventFor = (version: number): OutboxEvent => ({
  id: syncCompletedEventId(version),
  subject: SYNC_COMPLETED_SUBJECT,
  payload: {
    specversion: '1.0',
    id: syncCompletedEventId(version),
    data: { currentVersion: version },
  },
  createdAt: timeOf(version),
});

/** One synchronisation through the write protocol: recover, stage every dataset, commit. */
async function sync(changes: Partial<Record<Dataset, StagedItemChange[]>>): Promise<number> {
  await write.recover();
  const { version } = await write.readState();
  const next = version + 1;
  for (const [dataset, list] of Object.entries(changes) as Array<[Dataset, StagedItemChange[]]>) {
    await write.stageChanges(next, dataset, list, timeOf(next));
  }
  await write.commit({
    expectedVersion: version,
    nextVersion: next,
    committedAt: timeOf(next),
    event: eventFor(next),
  });
  return next;
}

/** Compact view of a listing: id@version(+deleted). */
async function listing(
  dataset: Dataset,
  atVersion: number,
  sinceVersion?: number,
): Promise<string[]> {
  const items = await read.listItems(dataset, { atVersion, sinceVersion });
  return items.map(
    (i) => `${(i.data as { id: string }).id}@${i.version}${i.isDeleted ? '-deleted' : ''}`,
  );
}

/** Three versions: v1 adds a,b,c; v2 changes b, deletes c, adds d; v3 brings c back and deletes a. */
async function threeVersions(): Promise<void> {
  await sync({ treatmentGroup: [upsert('a'), upsert('b'), upsert('c')] });
  await sync({ treatmentGroup: [upsert('b', 'B v2'), remove('c'), upsert('d')] });
  await sync({ treatmentGroup: [upsert('c', 'C again'), remove('a')] });
}

describe('read repository: R1-R6', () => {
  it('when nothing was ever committed, then the version is 0 and every listing is empty', async () => {
    expect(await read.currentVersion()).toBe(0);
    expect(await read.listItems('treatmentGroup', { atVersion: 0 })).toEqual([]);
    expect(await read.listItems('reimbursementGroup', { atVersion: 0, sinceVersion: 0 })).toEqual(
      [],
    );
  });

  it('when sinceVersion is omitted, then only non-deleted items are listed, each at its latest version', async () => {
    await threeVersions();
    expect(await read.currentVersion()).toBe(3);
    expect(await listing('treatmentGroup', 3)).toEqual(['b@2', 'd@2', 'c@3']);
    const items = await read.listItems('treatmentGroup', { atVersion: 3 });
    expect(items[0]).toEqual({
      data: tg('b', 'B v2'),
      version: 2,
      lastChanged: timeOf(2),
      isDeleted: false,
    });
    expect(Object.keys(items[0])).toEqual(['data', 'version', 'lastChanged', 'isDeleted']);
  });

  it('when sinceVersion is 0, then every item is listed, tombstones with their last data', async () => {
    await threeVersions();
    expect(await listing('treatmentGroup', 3, 0)).toEqual(['b@2', 'd@2', 'a@3-deleted', 'c@3']);
    const tombstone = (
      await read.listItems('treatmentGroup', { atVersion: 3, sinceVersion: 0 })
    )[2];
    expect(tombstone).toEqual({
      data: tg('a'),
      version: 3,
      lastChanged: timeOf(3),
      isDeleted: true,
    });
  });

  it('when sinceVersion is N, then items changed after N are listed, accumulated over several versions', async () => {
    await threeVersions();
    expect(await listing('treatmentGroup', 3, 1)).toEqual(['b@2', 'd@2', 'a@3-deleted', 'c@3']);
    expect(await listing('treatmentGroup', 3, 2)).toEqual(['a@3-deleted', 'c@3']);
  });

  it('when sinceVersion is the current version or above, then nothing is listed', async () => {
    await threeVersions();
    expect(await listing('treatmentGroup', 3, 3)).toEqual([]);
    expect(await listing('treatmentGroup', 3, Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  it('when a reader asks at the version before the latest commit, then it sees that version exactly', async () => {
    // Readers are served exactly at the current version and the one before it (a request that
    // fixed its version just before a commit); see README, "Readers".
    await sync({ treatmentGroup: [upsert('a'), upsert('b'), upsert('c')] });
    await sync({ treatmentGroup: [upsert('b', 'B v2'), remove('c'), upsert('d')] });
    expect(await listing('treatmentGroup', 1)).toEqual(['a@1', 'b@1', 'c@1']);
    expect(await listing('treatmentGroup', 1, 0)).toEqual(['a@1', 'b@1', 'c@1']);
    await sync({ treatmentGroup: [upsert('c', 'C again'), remove('a')] });
    expect(await listing('treatmentGroup', 2)).toEqual(['a@1', 'b@2', 'd@2']);
    expect(await listing('treatmentGroup', 2, 0)).toEqual(['a@1', 'b@2', 'c@2-deleted', 'd@2']);
    expect(await listing('treatmentGroup', 2, 1)).toEqual(['b@2', 'c@2-deleted', 'd@2']);
  });

  it('when items share a version, then they are ordered by id in binary order', async () => {
    await sync({ treatmentGroup: [upsert('b'), upsert('a'), upsert('B10'), upsert('A2')] });
    await sync({ treatmentGroup: [upsert('0', 'zero')] });
    expect(await listing('treatmentGroup', 2)).toEqual(['A2@1', 'B10@1', 'a@1', 'b@1', '0@2']);
  });

  it('when both datasets change in one run, then they share one version and stay separate', async () => {
    const rg = { id: 'A10AE04_1', legalBasis: { coding: [] }, indications: [], medicines: [] };
    await sync({
      treatmentGroup: [upsert('a')],
      reimbursementGroup: [{ itemId: rg.id, data: rg, isDeleted: false }],
    });
    expect(await listing('treatmentGroup', 1)).toEqual(['a@1']);
    expect(await listing('reimbursementGroup', 1)).toEqual(['A10AE04_1@1']);
    await sync({ reimbursementGroup: [remove(rg.id)] });
    expect(await listing('treatmentGroup', 2, 1)).toEqual([]);
    expect(await listing('reimbursementGroup', 2, 1)).toEqual(['A10AE04_1@2-deleted']);
  });

  it('when the options are not effective versions, then listItems refuses them', async () => {
    await expect(read.listItems('treatmentGroup', { atVersion: -1 })).rejects.toThrow(RangeError);
    await expect(
      read.listItems('treatmentGroup', { atVersion: 1, sinceVersion: -1 }),
    ).rejects.toThrow(RangeError);
  });
});

describe('reappearance', () => {
  it('when an item comes back after deletion, then it is listed once, active, at the new version', async () => {
    await sync({ treatmentGroup: [upsert('a')] });
    await sync({ treatmentGroup: [remove('a')] });
    expect(await listing('treatmentGroup', 2)).toEqual([]);
    await sync({ treatmentGroup: [upsert('a', 'A is back')] });

    expect(await listing('treatmentGroup', 3)).toEqual(['a@3']);
    expect(await listing('treatmentGroup', 3, 0)).toEqual(['a@3']);
    expect(await listing('treatmentGroup', 3, 1)).toEqual(['a@3']);
    expect((await read.listItems('treatmentGroup', { atVersion: 3 }))[0].data).toEqual(
      tg('a', 'A is back'),
    );
  });
});

describe('consistency without transactions', () => {
  it('when a change set is staged but not committed, then readers see exactly the committed version', async () => {
    await sync({ treatmentGroup: [upsert('a'), upsert('b'), upsert('c')] });
    const before = {
      full: await read.listItems('treatmentGroup', { atVersion: 1 }),
      all: await read.listItems('treatmentGroup', { atVersion: 1, sinceVersion: 0 }),
    };

    await write.stageChanges(
      2,
      'treatmentGroup',
      [upsert('b', 'B v2'), remove('c'), upsert('d')],
      timeOf(2),
    );

    const v = await read.currentVersion();
    expect(v).toBe(1);
    expect(await read.listItems('treatmentGroup', { atVersion: v })).toEqual(before.full);
    expect(await read.listItems('treatmentGroup', { atVersion: v, sinceVersion: 0 })).toEqual(
      before.all,
    );
    expect(await read.listItems('treatmentGroup', { atVersion: v, sinceVersion: 1 })).toEqual([]);

    await write.commit({
      expectedVersion: 1,
      nextVersion: 2,
      committedAt: timeOf(2),
      event: eventFor(2),
    });

    // A reader that fixed V=1 just before the commit still gets version 1, not a mix.
    expect(await read.listItems('treatmentGroup', { atVersion: v })).toEqual(before.full);
    expect(await read.currentVersion()).toBe(2);
    expect(await listing('treatmentGroup', 2)).toEqual(['a@1', 'b@2', 'd@2']);
    expect(await listing('treatmentGroup', 2, 1)).toEqual(['b@2', 'c@2-deleted', 'd@2']);
  });

  it('when staging is under way, then committedItems still describes the committed version', async () => {
    await sync({ treatmentGroup: [upsert('a'), upsert('b')] });
    await write.stageChanges(2, 'treatmentGroup', [upsert('a', 'A v2'), remove('b')], timeOf(2));
    const items = [];
    for await (const item of write.committedItems('treatmentGroup')) items.push(item);
    expect(items.sort((x, y) => x.itemId.localeCompare(y.itemId))).toEqual([
      {
        itemId: 'a',
        hash: contentHash(tg('a')),
        sourceHash: null,
        isDeleted: false,
        version: 1,
        data: tg('a'),
      },
      {
        itemId: 'b',
        hash: contentHash(tg('b')),
        sourceHash: null,
        isDeleted: false,
        version: 1,
        data: tg('b'),
      },
    ]);
  });

  it('when a run crashed after staging, then it is invisible, recover() removes it and the next run converges', async () => {
    const { Item } = refsyncModels(conn);
    await sync({ treatmentGroup: [upsert('a'), upsert('b'), upsert('c')] });
    const committed = await read.listItems('treatmentGroup', { atVersion: 1, sinceVersion: 0 });
    await write.stageChanges(
      2,
      'treatmentGroup',
      [upsert('a', 'crashed'), remove('b'), upsert('x')],
      timeOf(2),
    );
    // The process dies here. A new process starts with fresh repositories.
    const reader = createRefsyncReadRepository(conn);
    const writer = createRefsyncWriteRepository(conn);
    expect(await reader.currentVersion()).toBe(1);
    expect(await reader.listItems('treatmentGroup', { atVersion: 1, sinceVersion: 0 })).toEqual(
      committed,
    );

    await expect(
      writer.stageChanges(2, 'treatmentGroup', [upsert('a', 'retry')], timeOf(2)),
    ).rejects.toMatchObject(staging);
    // Three staged states discarded (x deleted, a and b set back), two committed states restored.
    expect(await writer.recover()).toEqual({ removed: 3, restored: 2 });
    expect(await Item.countDocuments({ version: { $gt: 1 } })).toBe(0);
    expect(await Item.countDocuments({ prev: { $ne: null } })).toBe(0);
    expect(await writer.recover()).toEqual({ removed: 0, restored: 0 });

    await writer.stageChanges(2, 'treatmentGroup', [upsert('c', 'C v2'), upsert('y')], timeOf(2));
    await writer.commit({
      expectedVersion: 1,
      nextVersion: 2,
      committedAt: timeOf(2),
      event: eventFor(2),
    });
    expect(await listing('treatmentGroup', 2, 0)).toEqual(['a@1', 'b@1', 'c@2', 'y@2']);
    expect((await read.listItems('treatmentGroup', { atVersion: 2 }))[0].data).toEqual(tg('a'));
    expect(await Item.countDocuments({})).toBe(4); // one document per item: a, b, c, y
  });

  it('when commit names a stale expected version, then it fails and changes nothing', async () => {
    const { State } = refsyncModels(conn);
    await sync({ treatmentGroup: [upsert('a')] });
    await write.stageChanges(2, 'treatmentGroup', [upsert('b')], timeOf(2));
    const stateBefore = await State.findById('refsync').lean();

    const stale = write.commit({
      expectedVersion: 0,
      nextVersion: 1,
      committedAt: timeOf(9),
      event: eventFor(1),
    });
    await expect(stale).rejects.toMatchObject(conflict);
    await expect(stale).rejects.toBeInstanceOf(AppError);
    await expect(stale).rejects.toMatchObject({
      details: { expectedVersion: 0, actualVersion: 1 },
    });

    expect(await State.findById('refsync').lean()).toEqual(stateBefore);
    expect(await listing('treatmentGroup', await read.currentVersion(), 0)).toEqual(['a@1']);
  });

  it('when two writers commit the same next version, then exactly one succeeds', async () => {
    await sync({ treatmentGroup: [upsert('a')] });
    await write.stageChanges(2, 'treatmentGroup', [upsert('b')], timeOf(2));
    const commit = () =>
      write.commit({
        expectedVersion: 1,
        nextVersion: 2,
        committedAt: timeOf(2),
        event: eventFor(2),
      });
    const results = await Promise.allSettled([commit(), commit()]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await read.currentVersion()).toBe(2);
    expect((await write.pendingEvents()).map((e) => e.id)).toEqual([
      eventFor(1).id,
      eventFor(2).id,
    ]);
  });

  it('when staging names a version other than committed + 1, then it is refused before writing', async () => {
    const { Item } = refsyncModels(conn);
    await sync({ treatmentGroup: [upsert('a')] });
    await expect(
      write.stageChanges(3, 'treatmentGroup', [upsert('b')], timeOf(3)),
    ).rejects.toMatchObject(conflict);
    expect(await Item.countDocuments({})).toBe(1);
  });

  it('when a tombstone names an item that is not active, then staging is refused', async () => {
    await sync({ treatmentGroup: [upsert('a')] });
    await sync({ treatmentGroup: [remove('a')] });
    const attempt = write.stageChanges(
      3,
      'treatmentGroup',
      [remove('a'), remove('never')],
      timeOf(3),
    );
    await expect(attempt).rejects.toMatchObject(staging);
    await expect(attempt).rejects.toMatchObject({ details: { itemIds: ['a', 'never'] } });
  });

  it('when a change set spans several batches, then every item is staged and superseded once', async () => {
    const n = STAGE_BATCH_SIZE * 2 + 17;
    const ids = Array.from({ length: n }, (_, i) => `tg-${String(i).padStart(5, '0')}`);
    await sync({ treatmentGroup: ids.map((id) => upsert(id)) });
    await write.recover();
    const result = await write.stageChanges(
      2,
      'treatmentGroup',
      ids.map((id, i) => (i % 2 === 0 ? upsert(id, 'renamed') : remove(id))),
      timeOf(2),
    );
    expect(result).toEqual({ inserted: n, superseded: n });
    await write.commit({
      expectedVersion: 1,
      nextVersion: 2,
      committedAt: timeOf(2),
      event: eventFor(2),
    });
    expect((await read.listItems('treatmentGroup', { atVersion: 2 })).length).toBe(
      Math.ceil(n / 2),
    );
    expect((await read.listItems('treatmentGroup', { atVersion: 2, sinceVersion: 1 })).length).toBe(
      n,
    );
  });
});

describe('committed items', () => {
  it('when asked without data, then refs of active items and tombstones come back without data', async () => {
    await sync({ treatmentGroup: [upsert('a'), upsert('b')] });
    await sync({ treatmentGroup: [remove('b')] });
    const refs = [];
    for await (const ref of write.committedItems('treatmentGroup', { includeData: false }))
      refs.push(ref);
    expect(refs.sort((x, y) => x.itemId.localeCompare(y.itemId))).toEqual([
      { itemId: 'a', hash: contentHash(tg('a')), sourceHash: null, isDeleted: false, version: 1 },
      { itemId: 'b', hash: contentHash(tg('b')), sourceHash: null, isDeleted: true, version: 2 },
    ]);
  });

  it('when changes carry the hash of their upstream bytes, then the committed state keeps it, across staging, recovery and deletion', async () => {
    const withSource = (id: string, name: string, sourceHash: string): StagedItemChange => ({
      ...upsert(id, name),
      sourceHash,
    });
    const refsNow = async () => {
      const refs: Array<{ itemId: string; sourceHash: string | null; isDeleted: boolean }> = [];
      for await (const ref of write.committedRefs('treatmentGroup')) {
        refs.push({ itemId: ref.itemId, sourceHash: ref.sourceHash, isDeleted: ref.isDeleted });
      }
      return refs.sort((x, y) => x.itemId.localeCompare(y.itemId));
    };
    await sync({
      treatmentGroup: [withSource('a', 'A', 'bytes-a1'), withSource('b', 'B', 'bytes-b1')],
    });
    expect(await refsNow()).toEqual([
      { itemId: 'a', sourceHash: 'bytes-a1', isDeleted: false },
      { itemId: 'b', sourceHash: 'bytes-b1', isDeleted: false },
    ]);

    // Staged but not committed: the committed state, and its source hash, is what counts.
    await write.stageChanges(2, 'treatmentGroup', [withSource('a', 'A2', 'bytes-a2')], timeOf(2));
    expect((await refsNow())[0]).toEqual({ itemId: 'a', sourceHash: 'bytes-a1', isDeleted: false });
    // The run crashes; recovery restores the committed state with its source hash.
    await write.recover();
    expect((await refsNow())[0]).toEqual({ itemId: 'a', sourceHash: 'bytes-a1', isDeleted: false });

    // A change staged without one (a source without bytes) leaves none; a tombstone has none.
    await sync({ treatmentGroup: [upsert('a', 'A3'), remove('b')] });
    expect(await refsNow()).toEqual([
      { itemId: 'a', sourceHash: null, isDeleted: false },
      { itemId: 'b', sourceHash: null, isDeleted: true },
    ]);
  });
});

describe('outbox', () => {
  it('when a version commits, then its event is pending until marked published', async () => {
    await sync({ treatmentGroup: [upsert('a')] });
    expect(await write.pendingEvents()).toEqual([{ ...eventFor(1), publishedAt: null }]);

    expect(await write.markEventPublished(eventFor(1).id, timeOf(20))).toBe(true);
    expect(await write.markEventPublished(eventFor(1).id)).toBe(false);
    expect(await write.markEventPublished('unknown')).toBe(false);
    expect(await write.pendingEvents()).toEqual([]);
  });

  it('when a run changes nothing, then its event is recorded once and the version stays', async () => {
    await sync({ treatmentGroup: [upsert('a')] });
    const unchanged = {
      ...eventFor(1),
      id: syncCompletedEventId(1, 'run-2'),
      createdAt: timeOf(2),
    };
    await write.recordUnchangedRun(unchanged);
    await write.recordUnchangedRun(unchanged);
    expect(await read.currentVersion()).toBe(1);
    expect((await write.pendingEvents()).map((e) => e.id)).toEqual([eventFor(1).id, unchanged.id]);
  });

  it('when a state document written before the shared outbox holds events, then the pending ones are listed, marked and trimmed as before', async () => {
    const { State } = refsyncModels(conn);
    // Exactly as the previous code stored them (raw, not through this repository).
    const stored = (version: number, publishedAt: Date | null) => ({
      id: eventFor(version).id,
      subject: SYNC_COMPLETED_SUBJECT,
      payload: eventFor(version).payload,
      createdAt: timeOf(version),
      publishedAt,
    });
    await State.collection.insertOne({
      _id: 'refsync' as never,
      version: 3,
      committedAt: timeOf(3),
      outbox: [stored(1, timeOf(10)), stored(3, null), stored(2, null)],
    });
    expect((await write.pendingEvents()).map((e) => e.id)).toEqual([
      eventFor(2).id,
      eventFor(3).id,
    ]);
    expect(await write.markEventPublished(eventFor(2).id, timeOf(11))).toBe(true);
    await write.prune({ keepPublishedEvents: 1 });
    const state = await State.findById('refsync').lean();
    expect(state?.outbox.map((e) => [e.id, e.publishedAt])).toEqual([
      [eventFor(3).id, null],
      [eventFor(2).id, timeOf(11)],
    ]);
    expect(await write.readState()).toEqual({ version: 3, committedAt: timeOf(3) });
  });

  it('when the very first run changes nothing, then the state document is created at version 0', async () => {
    await write.recordUnchangedRun({ ...eventFor(0), id: syncCompletedEventId(0, 'run-1') });
    expect(await write.readState()).toEqual({ version: 0, committedAt: null });
    expect(await write.pendingEvents()).toHaveLength(1);
  });
});

describe('one document per item', () => {
  it('when a change set is staged, then exactly one document per change is written and no other', async () => {
    const { Item } = refsyncModels(conn);
    await sync({ treatmentGroup: [upsert('a'), upsert('b'), upsert('c'), upsert('d')] });
    await sync({ treatmentGroup: [remove('d')] });
    const snapshot = async () =>
      new Map((await Item.find({}).lean()).map((d) => [d._id, JSON.stringify(d)]));
    const before = await snapshot();

    const result = await write.stageChanges(
      3,
      'treatmentGroup',
      [upsert('a', 'A v3'), remove('b'), upsert('d', 'D is back'), upsert('e')],
      timeOf(3),
    );

    expect(result).toEqual({ inserted: 4, superseded: 3 });
    const after = await snapshot();
    const written = [...after.keys()].filter((id) => before.get(id) !== after.get(id)).sort();
    expect(written).toEqual([
      'treatmentGroup:a',
      'treatmentGroup:b',
      'treatmentGroup:d',
      'treatmentGroup:e',
    ]);
    expect(after.size).toBe(before.size + 1);
    expect(await Item.findById('treatmentGroup:a').lean()).toMatchObject({
      version: 3,
      data: tg('a', 'A v3'),
      prev: { version: 1, data: tg('a'), isDeleted: false, lastChanged: timeOf(1) },
    });
  });

  it('when items changed over several versions, then each keeps one document and prune removes none', async () => {
    const { Item } = refsyncModels(conn);
    await sync({ treatmentGroup: [upsert('a'), upsert('b')] });
    await sync({ treatmentGroup: [upsert('a', 'A v2')] });
    await sync({ treatmentGroup: [upsert('a', 'A v3')] });
    await sync({ treatmentGroup: [remove('b')] });
    const answers = async () => ({
      atV: await read.listItems('treatmentGroup', { atVersion: 4 }),
      allAtV: await read.listItems('treatmentGroup', { atVersion: 4, sinceVersion: 0 }),
      diffAtV: await read.listItems('treatmentGroup', { atVersion: 4, sinceVersion: 2 }),
      atPrevious: await read.listItems('treatmentGroup', { atVersion: 3, sinceVersion: 0 }),
    });
    const before = await answers();
    expect(await Item.countDocuments({})).toBe(2);
    expect(await listing('treatmentGroup', 4, 0)).toEqual(['a@3', 'b@4-deleted']);
    expect(await listing('treatmentGroup', 3, 0)).toEqual(['b@1', 'a@3']);

    expect(await write.prune()).toBe(0);
    expect(await answers()).toEqual(before);
    await expect(write.prune({ graceVersions: -1 })).rejects.toThrow(RangeError);
  });
});

describe('readers behind the current version', () => {
  it('when a reader fixed V before a commit and the next run is staging, then it still gets exactly V', async () => {
    await sync({ treatmentGroup: [upsert('a'), upsert('b'), upsert('c')] });
    const v1 = {
      full: await read.listItems('treatmentGroup', { atVersion: 1 }),
      all: await read.listItems('treatmentGroup', { atVersion: 1, sinceVersion: 0 }),
    };
    await sync({ treatmentGroup: [upsert('a', 'A v2')] });
    // Version 3 stages items that version 2 did not touch: their prev is still the state at 1.
    await write.stageChanges(3, 'treatmentGroup', [remove('b'), upsert('c', 'C v3')], timeOf(3));

    expect(await read.listItems('treatmentGroup', { atVersion: 1 })).toEqual(v1.full);
    expect(await read.listItems('treatmentGroup', { atVersion: 1, sinceVersion: 0 })).toEqual(
      v1.all,
    );
    expect(await listing('treatmentGroup', 2)).toEqual(['b@1', 'c@1', 'a@2']);
    expect(await listing('treatmentGroup', 2, 1)).toEqual(['a@2']);
  });

  it('when two runs staged since a reader fixed its version, then it gets a conflict, never a wrong answer', async () => {
    await sync({ treatmentGroup: [upsert('a'), upsert('b')] });
    await sync({ treatmentGroup: [upsert('a', 'A v2')] });
    // a changes again: its document now holds the states of 2 and 3; the state at 1 is gone.
    await write.stageChanges(3, 'treatmentGroup', [upsert('a', 'A v3')], timeOf(3));

    await expect(read.listItems('treatmentGroup', { atVersion: 1 })).rejects.toMatchObject({
      code: REFSYNC_VERSION_CONFLICT,
      details: { expectedVersion: 1, actualVersion: 2 },
    });
    await expect(
      read.listItems('treatmentGroup', { atVersion: 1, sinceVersion: 0 }),
    ).rejects.toMatchObject(conflict);
    expect(await listing('treatmentGroup', 2)).toEqual(['b@1', 'a@2']);
  });
});

describe('prune', () => {
  it('when published events exceed the number to keep, then the oldest published go and pending stay', async () => {
    for (let v = 1; v <= 4; v += 1) await sync({ treatmentGroup: [upsert('a', `A v${v}`)] });
    for (const v of [1, 2, 3]) await write.markEventPublished(eventFor(v).id);
    await write.prune({ keepPublishedEvents: 1 });
    const { State } = refsyncModels(conn);
    const state = await State.findById('refsync').lean();
    expect(state?.outbox.map((e) => e.id)).toEqual([eventFor(3).id, eventFor(4).id]);
    expect((await write.pendingEvents()).map((e) => e.id)).toEqual([eventFor(4).id]);
  });
});

describe('scanItems: the selection streamed', () => {
  /** What scanItems delivers: items in order through the callback, then the late ones. */
  async function scan(dataset: Dataset, atVersion: number, sinceVersion?: number) {
    const inOrder: string[] = [];
    const late = await read.scanItems(dataset, { atVersion, sinceVersion }, ({ itemId, item }) =>
      inOrder.push(`${itemId}@${item.version}${item.isDeleted ? '-deleted' : ''}`),
    );
    return {
      inOrder,
      late: late.map(
        ({ itemId, item }) => `${itemId}@${item.version}${item.isDeleted ? '-deleted' : ''}`,
      ),
    };
  }

  it('when nothing is staged, then every item comes through the callback in response order', async () => {
    await threeVersions();
    expect(await scan('treatmentGroup', 3)).toEqual({
      inOrder: ['b@2', 'd@2', 'c@3'],
      late: [],
    });
    expect(await scan('treatmentGroup', 3, 1)).toEqual({
      inOrder: ['b@2', 'd@2', 'a@3-deleted', 'c@3'],
      late: [],
    });
  });

  it('when a run is staging, then the items it replaced come last, in response order, with their state at V', async () => {
    await sync({ treatmentGroup: [upsert('a'), upsert('b'), upsert('c'), upsert('d')] });
    await sync({ treatmentGroup: [upsert('b', 'B v2')] });
    await write.stageChanges(3, 'treatmentGroup', [upsert('d', 'D v3'), remove('a')], timeOf(3));

    const scanned = await scan('treatmentGroup', 2);
    expect(scanned).toEqual({ inOrder: ['c@1', 'b@2'], late: ['a@1', 'd@1'] });
    // listItems is exactly the merge of the two.
    expect(await listing('treatmentGroup', 2)).toEqual(['a@1', 'c@1', 'd@1', 'b@2']);
    expect(await scan('treatmentGroup', 2, 0)).toEqual({
      inOrder: ['c@1', 'b@2'],
      late: ['a@1', 'd@1'],
    });
  });

  it('when the list spans several cursor batches, then every item comes exactly once, in order', async () => {
    const ids = Array.from({ length: 2345 }, (_, i) => `g${String(i).padStart(5, '0')}`);
    await sync({ treatmentGroup: ids.map((id) => upsert(id)) });
    await sync({ treatmentGroup: ids.filter((_, i) => i % 7 === 0).map((id) => upsert(id, 'v2')) });

    const { inOrder, late } = await scan('treatmentGroup', 2);
    expect(late).toEqual([]);
    const expected = [
      ...ids.filter((_, i) => i % 7 !== 0).map((id) => `${id}@1`),
      ...ids.filter((_, i) => i % 7 === 0).map((id) => `${id}@2`),
    ];
    expect(inOrder).toEqual(expected);
    expect(await listing('treatmentGroup', 2)).toEqual(expected);
  });

  it('when two runs staged since the reader fixed its version, then it rejects with a conflict', async () => {
    await sync({ treatmentGroup: [upsert('a'), upsert('b')] });
    await sync({ treatmentGroup: [upsert('a', 'A v2')] });
    await write.stageChanges(3, 'treatmentGroup', [upsert('a', 'A v3')], timeOf(3));
    await expect(
      read.scanItems('treatmentGroup', { atVersion: 1 }, () => undefined),
    ).rejects.toMatchObject(conflict);
  });

  it('when the callback throws, then the scan rejects with that error and the connection stays usable', async () => {
    const ids = Array.from({ length: 1500 }, (_, i) => `h${String(i).padStart(5, '0')}`);
    await sync({ treatmentGroup: ids.map((id) => upsert(id)) });
    const boom = new Error('sink failed');
    await expect(
      read.scanItems('treatmentGroup', { atVersion: 1 }, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect((await listing('treatmentGroup', 1)).length).toBe(1500);
  });
});
