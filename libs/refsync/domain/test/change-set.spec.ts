import {
  REFSYNC_DUPLICATE_ITEM_IDS,
  computeChangeSet,
  contentHash,
  deletionShare,
  eventCounts,
  exceedsDeletionShare,
  findDuplicateIds,
  toItemChanges,
} from '../src/index';

const data = (id: string, name = `name ${id}`) => ({ id, name });
const committed = (id: string, isDeleted = false, name = `name ${id}`) => ({
  id,
  hash: contentHash(data(id, name)),
  isDeleted,
});

describe('computeChangeSet', () => {
  it('when upstream adds, changes, drops, resends a tombstone and repeats items, then each is classified', () => {
    const upstream = [
      { id: 'same', data: { name: 'name same', id: 'same' } }, // key order differs, same content
      { id: 'edited', data: data('edited', 'new name') },
      { id: 'new', data: data('new') },
      { id: 'back', data: data('back') },
    ];
    const state = [
      committed('same'),
      committed('edited'),
      committed('gone'),
      committed('back', true),
      committed('dead', true),
    ];

    const cs = computeChangeSet(upstream, state);

    expect(cs.added.map((i) => i.id)).toEqual(['new']);
    expect(cs.changed.map((i) => i.id)).toEqual(['edited']);
    expect(cs.reappeared.map((i) => i.id)).toEqual(['back']);
    expect(cs.deleted).toEqual([state[2]]);
    expect(cs.unchanged).toBe(1);
    expect(cs.counts).toEqual({
      added: 1,
      changed: 1,
      deleted: 1,
      reappeared: 1,
      unchanged: 1,
      activeBefore: 3,
      activeAfter: 4,
    });
    expect(cs.hasChanges).toBe(true);
    expect(cs.changed[0].hash).toBe(contentHash(data('edited', 'new name')));
  });

  it('when a tombstone comes back with identical data, then it is a reappearance, not unchanged', () => {
    const cs = computeChangeSet([{ id: 'a', data: data('a') }], [committed('a', true)]);
    expect(cs.reappeared).toHaveLength(1);
    expect(cs.unchanged).toBe(0);
  });

  it('when upstream re-sends the same data, then there is no change', () => {
    const cs = computeChangeSet([{ id: 'a', data: data('a') }], [committed('a')]);
    expect(cs.hasChanges).toBe(false);
    expect(cs.unchanged).toBe(1);
  });

  it('when a deleted item stays absent upstream, then it is not deleted again', () => {
    const cs = computeChangeSet([], [committed('a', true)]);
    expect(cs.hasChanges).toBe(false);
    expect(cs.counts.activeBefore).toBe(0);
  });

  it('when nothing is committed yet, then everything is added', () => {
    const cs = computeChangeSet(
      [
        { id: 'a', data: data('a') },
        { id: 'b', data: data('b') },
      ],
      [],
    );
    expect(cs.counts.added).toBe(2);
  });

  it('when upstream supplies a hash, then it is used as given', () => {
    const cs = computeChangeSet(
      [{ id: 'a', data: data('a'), hash: 'precomputed' }],
      [committed('a')],
    );
    expect(cs.changed[0].hash).toBe('precomputed');
  });

  it('when upstream repeats an id, then it throws naming the id', () => {
    const run = () =>
      computeChangeSet(
        [
          { id: 'a', data: 1 },
          { id: 'a', data: 2 },
          { id: 'a', data: 3 },
        ],
        [],
      );
    expect(run).toThrow(
      expect.objectContaining({ code: REFSYNC_DUPLICATE_ITEM_IDS, details: { ids: ['a'] } }),
    );
    expect(run).toThrow('duplicate item ids from upstream: a');
  });

  it('when converted to item changes, then upserts carry data and tombstones carry only the id', () => {
    const cs = computeChangeSet(
      [
        { id: 'n', data: data('n') },
        { id: 'b', data: data('b') },
      ],
      [committed('g'), committed('b', true)],
    );
    expect(toItemChanges(cs)).toEqual([
      { itemId: 'n', data: data('n'), hash: contentHash(data('n')), isDeleted: false },
      { itemId: 'b', data: data('b'), hash: contentHash(data('b')), isDeleted: false },
      { itemId: 'g', isDeleted: true },
    ]);
    expect(eventCounts(cs)).toEqual({ added: 2, updated: 0, deleted: 1, total: 2 });
  });
});

describe('findDuplicateIds', () => {
  it('when ids repeat, then each repeated id is reported once', () => {
    expect(findDuplicateIds(['a', 'b', 'a', 'c', 'a', 'b'])).toEqual(['a', 'b']);
    expect(findDuplicateIds(['a', 'b'])).toEqual([]);
  });
});

describe('mass deletion', () => {
  it('when the deleted share is above the limit, then it exceeds', () => {
    expect(exceedsDeletionShare(21, 100, 0.2)).toBe(true);
  });

  it('when the deleted share equals the limit, then it does not exceed', () => {
    expect(exceedsDeletionShare(20, 100, 0.2)).toBe(false);
  });

  it('when upstream is empty against a populated dataset, then it exceeds', () => {
    expect(exceedsDeletionShare(300, 300, 0.2)).toBe(true);
  });

  it('when nothing is active, then nothing can be mass-deleted', () => {
    expect(exceedsDeletionShare(0, 0, 0)).toBe(false);
    expect(deletionShare(0, 0)).toBe(0);
  });

  it('when the limit or count is nonsense, then it throws', () => {
    expect(() => exceedsDeletionShare(1, 10, 1.5)).toThrow(RangeError);
    expect(() => exceedsDeletionShare(1, 10, Number.NaN)).toThrow(RangeError);
    expect(() => exceedsDeletionShare(-1, 10, 0.2)).toThrow(RangeError);
  });
});
