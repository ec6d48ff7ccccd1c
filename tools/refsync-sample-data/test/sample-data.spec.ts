import { readFile } from 'node:fs/promises';
import { itemDataSchemas, type Dataset } from '@nhp/refsync-contracts';
import { computeChangeSet, contentHash, findDuplicateIds } from '@nhp/refsync-domain';
import { buildSampleData, CODE_SYSTEMS, readSampleData, sampleDataPath } from '../src';
import { sampleFileContent } from '../src/generate-sample';

const DATASETS: Dataset[] = ['treatmentGroup', 'reimbursementGroup'];

describe('shipped sample data', () => {
  it.each(['v1', 'v2'] as const)(
    'when %s is validated with the contracts, then every item passes',
    async (version) => {
      for (const dataset of DATASETS) {
        const items = await readSampleData(version, dataset);
        const failures = items
          .map((item, index) => ({ index, result: itemDataSchemas[dataset].safeParse(item) }))
          .filter((r) => !r.result.success);
        expect(failures).toEqual([]);
        expect(findDuplicateIds(items.map((i) => i.id))).toEqual([]);
      }
    },
  );

  it('when counted, then there are at least 50 treatment groups and 300 reimbursement groups', async () => {
    expect((await readSampleData('v1', 'treatmentGroup')).length).toBeGreaterThanOrEqual(50);
    expect((await readSampleData('v1', 'reimbursementGroup')).length).toBeGreaterThanOrEqual(300);
  });

  it('when reimbursement groups are inspected, then they use the code systems of the decisions', async () => {
    const groups = await readSampleData('v1', 'reimbursementGroup');
    for (const group of groups) {
      expect(group.id).toMatch(/^[A-Z]\d{2}[A-Z]{2}(\d{2})?_\d+$/);
      expect(group.legalBasis.coding[0].system).toBe(CODE_SYSTEMS.legalBasis);
      for (const indication of group.indications) {
        expect([CODE_SYSTEMS.icpc2, CODE_SYSTEMS.icd10]).toContain(indication.coding[0].system);
      }
      for (const m of group.medicines) expect(m.identifier.value).toMatch(/^\d{6}$/);
    }
    const systems = new Set(groups.flatMap((g) => g.indications.map((i) => i.coding[0].system)));
    expect(systems).toEqual(new Set([CODE_SYSTEMS.icpc2, CODE_SYSTEMS.icd10]));
    expect(groups.filter((g) => g.medicines.length === 0).length).toBeGreaterThan(0);
    expect(groups.find((g) => g.id === 'A10AE04_1')?.medicines[0].identifier.value).toBe('526181');
    const varenummer = groups.flatMap((g) => g.medicines.map((m) => m.identifier.value));
    expect(new Set(varenummer).size).toBe(varenummer.length);
  });

  it('when treatment groups are inspected, then they carry extra upstream fields beyond id and name', async () => {
    const groups = await readSampleData('v1', 'treatmentGroup');
    for (const group of groups) {
      expect(Object.keys(group)).toEqual(
        expect.arrayContaining(['id', 'name', 'description', 'atcCodes', 'validFrom']),
      );
    }
  });

  it.each(DATASETS)(
    'when v2 of %s is diffed against v1, then it has a few percent of adds, changes and removals',
    async (dataset) => {
      const v1 = await readSampleData('v1', dataset);
      const v2 = await readSampleData('v2', dataset);
      const committed = v1.map((item) => ({
        id: item.id,
        hash: contentHash(item),
        isDeleted: false,
      }));
      const cs = computeChangeSet(
        v2.map((item) => ({ id: item.id, data: item })),
        committed,
      );
      const delta = buildSampleData().delta[dataset];
      expect(cs.added.map((i) => i.id).sort()).toEqual([...delta.added].sort());
      expect(cs.changed.map((i) => i.id).sort()).toEqual([...delta.changed].sort());
      expect(cs.deleted.map((i) => i.id).sort()).toEqual([...delta.removed].sort());
      for (const count of [cs.counts.added, cs.counts.changed, cs.counts.deleted]) {
        expect(count).toBeGreaterThan(0);
        expect(count / v1.length).toBeLessThanOrEqual(0.06);
      }
    },
  );

  it('when the generator runs again, then it produces the shipped files byte for byte', async () => {
    const data = buildSampleData();
    for (const version of ['v1', 'v2'] as const) {
      for (const dataset of DATASETS) {
        expect(sampleFileContent(data[version][dataset])).toBe(
          await readFile(sampleDataPath(version, dataset), 'utf8'),
        );
      }
    }
  });
});
