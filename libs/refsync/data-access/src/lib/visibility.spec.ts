import { changedSinceAt, MAX_DIFF_VERSIONS_AS_LIST, visibleAt } from './visibility';

describe('visibility filters', () => {
  it('when a reader is at V, then only documents written by V and not superseded by V qualify', () => {
    expect(visibleAt('treatmentGroup', 4)).toEqual({
      dataset: 'treatmentGroup',
      version: { $lte: 4 },
      $or: [{ supersededAt: null }, { supersededAt: { $gt: 4 } }],
    });
  });

  it('when the diff spans few versions, then it lists exactly the versions in (N, V] for point lookups', () => {
    expect(changedSinceAt('reimbursementGroup', 2, 5).version).toEqual({ $in: [3, 4, 5] });
    expect(
      changedSinceAt('reimbursementGroup', 0, MAX_DIFF_VERSIONS_AS_LIST).version,
    ).toMatchObject({
      $in: expect.arrayContaining([1, MAX_DIFF_VERSIONS_AS_LIST]),
    });
  });

  it('when the diff spans more versions than the list limit, then it uses the same range as a range', () => {
    expect(changedSinceAt('reimbursementGroup', 0, MAX_DIFF_VERSIONS_AS_LIST + 1).version).toEqual({
      $gt: 0,
      $lte: MAX_DIFF_VERSIONS_AS_LIST + 1,
    });
  });
});
