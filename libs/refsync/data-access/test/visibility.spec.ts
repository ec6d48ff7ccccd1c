import {
  changedSinceAt,
  fullListAt,
  MAX_DIFF_VERSIONS_AS_LIST,
  STAGING_LOOKAHEAD,
  visibleState,
} from '../src/lib/visibility';

const state = (version: number, isDeleted = false) => ({
  version,
  data: { v: version },
  hash: `h${version}`,
  isDeleted,
  lastChanged: new Date(0),
});

describe('visibility', () => {
  it('when the head state was committed by V, then it is the visible one', () => {
    const doc = { ...state(3), prev: state(1) };
    expect(visibleState(doc, 3)).toBe(doc);
    expect(visibleState(doc, 5)).toBe(doc);
  });

  it('when the head state is staged above V, then the state it replaced is visible, or nothing for a new item', () => {
    expect(visibleState({ ...state(4), prev: state(2, true) }, 3)).toEqual(state(2, true));
    expect(visibleState({ ...state(4), prev: null }, 3)).toBeUndefined();
  });

  it('when both states are newer than V, then the state at V is reported lost', () => {
    expect(visibleState({ ...state(5), prev: state(4) }, 3)).toBe('lost');
  });

  it('when a reader lists at V, then committed non-deleted states and the heads of a staging above V qualify', () => {
    expect(fullListAt('treatmentGroup', 4)).toEqual({
      dataset: 'treatmentGroup',
      $or: [
        { dataset: 'treatmentGroup', isDeleted: false, version: { $lte: 4 } },
        { dataset: 'treatmentGroup', version: { $gt: 4 }, prev: { $ne: null } },
      ],
    });
  });

  it('when the diff spans few versions, then it lists the versions in (N, V + lookahead] for point lookups', () => {
    const filter = changedSinceAt('reimbursementGroup', 2, 5);
    expect(filter.version).toEqual({ $in: [3, 4, 5, 6, 7] });
    expect(filter.$or).toEqual([{ version: { $lte: 5 } }, { 'prev.version': { $gt: 2 } }]);
    expect(
      changedSinceAt('reimbursementGroup', 0, MAX_DIFF_VERSIONS_AS_LIST - STAGING_LOOKAHEAD)
        .version,
    ).toMatchObject({ $in: expect.arrayContaining([1, MAX_DIFF_VERSIONS_AS_LIST]) });
  });

  it('when the diff spans more versions than the list limit, then it uses the same span as a range', () => {
    expect(changedSinceAt('reimbursementGroup', 0, MAX_DIFF_VERSIONS_AS_LIST).version).toEqual({
      $gt: 0,
      $lte: MAX_DIFF_VERSIONS_AS_LIST + STAGING_LOOKAHEAD,
    });
  });
});
