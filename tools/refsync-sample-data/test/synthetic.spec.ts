import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { itemDataSchemas } from '@nhp/refsync-contracts';
import { computeChangeSet, contentHash, findDuplicateIds } from '@nhp/refsync-domain';
import { changedIndices, syntheticReimbursementGroups, syntheticTreatmentGroups } from '../src';
import { main } from '../src/synthetic';

const diff = (before: Array<{ id: string }>, after: Array<{ id: string }>) =>
  computeChangeSet(
    after.map((item) => ({ id: item.id, data: item })),
    before.map((item) => ({ id: item.id, hash: contentHash(item), isDeleted: false })),
  );

describe('synthetic reimbursement groups', () => {
  it('when generated twice with one seed, then the output is identical, and another seed differs', () => {
    expect(syntheticReimbursementGroups(500, { seed: 7 })).toEqual(
      syntheticReimbursementGroups(500, { seed: 7 }),
    );
    expect(syntheticReimbursementGroups(50, { seed: 8 })).not.toEqual(
      syntheticReimbursementGroups(50, { seed: 7 }),
    );
  });

  it('when generated, then ids are unique and every item passes the contract', () => {
    const items = syntheticReimbursementGroups(5000, { seed: 3 });
    expect(items).toHaveLength(5000);
    expect(findDuplicateIds(items.map((i) => i.id))).toEqual([]);
    expect(items.filter((i) => !itemDataSchemas.reimbursementGroup.safeParse(i).success)).toEqual(
      [],
    );
  });

  it('when a larger count is generated, then the smaller dataset is its prefix', () => {
    expect(syntheticReimbursementGroups(2000, { seed: 4 }).slice(0, 300)).toEqual(
      syntheticReimbursementGroups(300, { seed: 4 }),
    );
  });

  it('when a change share is given, then exactly that many items change and no id is added or removed', () => {
    const base = syntheticReimbursementGroups(20_000, { seed: 11 });
    const next = syntheticReimbursementGroups(20_000, { seed: 11, changeShare: 0.005 });
    const cs = diff(base, next);
    expect(cs.counts).toMatchObject({ added: 0, deleted: 0, changed: 100, unchanged: 19_900 });
    expect(
      cs.changed.filter((c) => !itemDataSchemas.reimbursementGroup.safeParse(c.data).success),
    ).toEqual([]);
  });
});

describe('synthetic treatment groups', () => {
  it('when generated with a change share, then ids stay, extra fields are present and 1% change', () => {
    const base = syntheticTreatmentGroups(10_000, { seed: 2 });
    const next = syntheticTreatmentGroups(10_000, { seed: 2, changeShare: 0.01 });
    expect(findDuplicateIds(base.map((i) => i.id))).toEqual([]);
    expect(base.filter((i) => !itemDataSchemas.treatmentGroup.safeParse(i).success)).toEqual([]);
    expect(Object.keys(base[0])).toEqual(
      expect.arrayContaining(['description', 'atcCodes', 'validFrom']),
    );
    expect(diff(base, next).counts).toMatchObject({ added: 0, deleted: 0, changed: 100 });
  });
});

describe('changedIndices', () => {
  it('when the share is nonsense, then it throws; when it rounds to zero, then nothing changes', () => {
    expect(() => changedIndices(10, 2)).toThrow(RangeError);
    expect(changedIndices(10, 0.01).size).toBe(0);
    expect(changedIndices(3, 1)).toEqual(new Set([0, 1, 2]));
  });

  it('when counts are not integers, then the generators throw', () => {
    expect(() => syntheticReimbursementGroups(-1)).toThrow(RangeError);
    expect(() => syntheticTreatmentGroups(1.5)).toThrow(RangeError);
  });
});

describe('synthetic CLI', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'refsync-synthetic-'));
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('when asked for a JSON file, then it writes the same items the generator returns', async () => {
    const out = join(dir, 'rg.json');
    expect(await main(['--count', '1200', '--out', out, '--seed', '5'])).toBe(0);
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(
      syntheticReimbursementGroups(1200, { seed: 5 }),
    );
  });

  it('when asked for NDJSON treatment groups, then each line is one item', async () => {
    const out = join(dir, 'tg.ndjson');
    expect(await main(['--count', '3', '--out', out, '--dataset', 'treatmentGroup'])).toBe(0);
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(syntheticTreatmentGroups(3));
  });

  it('when the arguments are wrong, then it exits with 2 and writes nothing', async () => {
    expect(await main(['--count', 'many', '--out', join(dir, 'x.json')])).toBe(2);
    expect(await main(['--count', '3'])).toBe(2);
    expect(await main(['--count', '3', '--out', join(dir, 'x.json'), '--dataset', 'other'])).toBe(
      2,
    );
    expect(await main(['--nope'])).toBe(2);
    await expect(readFile(join(dir, 'x.json'))).rejects.toThrow();
  });
});
