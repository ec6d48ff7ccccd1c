import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Dataset, ItemDataOf } from '@nhp/refsync-contracts';

export type SampleVersion = 'v1' | 'v2';

/** The directory holding the shipped sample files (`<dir>/v1/...`, `<dir>/v2/...`). */
export const SAMPLE_DATA_DIR = resolve(__dirname, '..', 'data');

export const SAMPLE_FILE_NAMES: Record<Dataset, string> = {
  treatmentGroup: 'treatment-groups.json',
  reimbursementGroup: 'reimbursement-groups.json',
};

/** Absolute path of a shipped sample upstream file (a JSON array), e.g. for a file:// source. */
export function sampleDataPath(version: SampleVersion, dataset: Dataset): string {
  return join(SAMPLE_DATA_DIR, version, SAMPLE_FILE_NAMES[dataset]);
}

/** The parsed items of a shipped sample file. */
export async function readSampleData<D extends Dataset>(
  version: SampleVersion,
  dataset: D,
): Promise<ItemDataOf<D>[]> {
  return JSON.parse(await readFile(sampleDataPath(version, dataset), 'utf8')) as ItemDataOf<D>[];
}
