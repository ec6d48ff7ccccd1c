/**
 * Large deterministic datasets for benchmarks:
 *
 *   npx tsx tools/refsync-sample-data/src/synthetic.ts --count 100000 --out /tmp/rg.json \
 *     [--dataset reimbursementGroup|treatmentGroup] [--seed 1] [--change-share 0.01] [--format json|ndjson]
 *
 * Item i depends only on (seed, i), so datasets of different sizes share their prefix, and the same
 * (count, seed) with a `changeShare` differs from the unchanged one in exactly
 * round(count × changeShare) items, same ids, spread evenly: "100 changed among 100k" is
 * `{ seed, changeShare: 0.001 }` against `{ seed }`.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Dataset, ReimbursementGroupData, TreatmentGroupData } from '@nhp/refsync-contracts';
import {
  legalBasis,
  medicine,
  randomVarenummer,
  reimbursementGroup,
  treatmentGroup,
} from './build';
import { SUBSTANCES } from './codes';
import { createRandom, deriveSeed, type Random } from './random';
import { THERAPEUTIC_GROUPS } from './treatment-catalog';

export interface SyntheticOptions {
  /** Default 1. */
  seed?: number;
  /** Share (0..1) of items whose data differs from the `changeShare: 0` dataset. Default 0. */
  changeShare?: number;
}

/** Indices of the changed items: exactly round(count × share), evenly spread, deterministic. */
export function changedIndices(count: number, changeShare = 0): Set<number> {
  if (!(changeShare >= 0 && changeShare <= 1))
    throw new RangeError(`changeShare must be within 0..1, got ${changeShare}`);
  const changed = Math.round(count * changeShare);
  const out = new Set<number>();
  for (let k = 0; k < changed; k += 1) out.add(Math.floor(((k + 0.5) * count) / changed));
  return out;
}

function checkCount(count: number): void {
  if (!Number.isSafeInteger(count) || count < 0)
    throw new RangeError(`count must be a non-negative integer, got ${count}`);
}

/**
 * `count` reimbursement groups with ids `<ATC>_<n>` (unique), the sample's code systems and shapes.
 * 100k items take well under a second.
 */
export function syntheticReimbursementGroups(
  count: number,
  options: SyntheticOptions = {},
): ReimbursementGroupData[] {
  checkCount(count);
  const seed = options.seed ?? 1;
  const changed = changedIndices(count, options.changeShare);
  const out = new Array<ReimbursementGroupData>(count);
  for (let i = 0; i < count; i += 1) {
    const random = createRandom(deriveSeed(seed, i));
    const substance = SUBSTANCES[i % SUBSTANCES.length];
    const n = Math.floor(i / SUBSTANCES.length) + 1;
    const group = reimbursementGroup(random, substance, n, {
      nextVarenummer: () => randomVarenummer(random),
    });
    if (changed.has(i))
      changeReimbursementGroup(createRandom(deriveSeed(seed ^ 0x5bd1e995, i)), group, i);
    out[i] = group;
  }
  return out;
}

/** One of three edits, each guaranteed to change the data. */
function changeReimbursementGroup(random: Random, group: ReimbursementGroupData, i: number): void {
  switch (i % 3) {
    case 0:
      group.legalBasis = legalBasis(group.legalBasis.coding[0].code === '200' ? '302' : '200');
      break;
    case 1:
      group.medicines.push(medicine(random, 'Nytt generikum tab 10 mg', randomVarenummer(random)));
      break;
    default:
      group.indications = group.indications.slice(0, -1);
      if (group.indications.length === 0)
        group.medicines = [...group.medicines, medicine(random, 'Ny pakning', '000001')];
  }
}

/** `count` treatment groups with ids `TG-<000001>` and the sample's extra upstream fields. */
export function syntheticTreatmentGroups(
  count: number,
  options: SyntheticOptions = {},
): TreatmentGroupData[] {
  checkCount(count);
  const seed = options.seed ?? 1;
  const changed = changedIndices(count, options.changeShare);
  const out = new Array<TreatmentGroupData>(count);
  for (let i = 0; i < count; i += 1) {
    const random = createRandom(deriveSeed(seed, i));
    const group = THERAPEUTIC_GROUPS[i % THERAPEUTIC_GROUPS.length];
    const id = `TG-${String(i + 1).padStart(6, '0')}`;
    const data = treatmentGroup(
      random,
      group,
      id,
      `${group.name} ${Math.floor(i / THERAPEUTIC_GROUPS.length) + 1}`,
    );
    if (changed.has(i)) data['description'] = `${String(data['description'])} Revidert.`;
    out[i] = data;
  }
  return out;
}

export function syntheticItems(dataset: Dataset, count: number, options: SyntheticOptions = {}) {
  return dataset === 'treatmentGroup'
    ? syntheticTreatmentGroups(count, options)
    : syntheticReimbursementGroups(count, options);
}

/** Writes items as a JSON array or NDJSON, streaming in chunks so 100k items need no giant string. */
export async function writeItems(
  file: string,
  items: readonly unknown[],
  format: 'json' | 'ndjson',
): Promise<void> {
  const out = createWriteStream(file);
  const write = async (chunk: string) => {
    if (!out.write(chunk)) await once(out, 'drain');
  };
  const CHUNK = 1000;
  if (format === 'json') await write('[');
  for (let start = 0; start < items.length; start += CHUNK) {
    const lines = items.slice(start, start + CHUNK).map((item) => JSON.stringify(item));
    if (format === 'json') await write(`${start === 0 ? '\n' : ',\n'}${lines.join(',\n')}`);
    else await write(`${lines.join('\n')}\n`);
  }
  if (format === 'json') await write('\n]\n');
  out.end();
  await once(out, 'finish');
}

const USAGE =
  'usage: synthetic.ts --count <n> --out <file> [--dataset reimbursementGroup|treatmentGroup] [--seed <n>] [--change-share <0..1>] [--format json|ndjson]';

export async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        count: { type: 'string' },
        out: { type: 'string' },
        dataset: { type: 'string', default: 'reimbursementGroup' },
        seed: { type: 'string', default: '1' },
        'change-share': { type: 'string', default: '0' },
        format: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const count = Number(values.count);
  const seed = Number(values.seed);
  const changeShare = Number(values['change-share']);
  const dataset = values.dataset;
  const format = values.format ?? (values.out?.endsWith('.ndjson') ? 'ndjson' : 'json');
  const problems = [
    !values.count || !Number.isSafeInteger(count) || count < 0
      ? '--count must be a non-negative integer'
      : '',
    !values.out ? '--out is required' : '',
    !Number.isSafeInteger(seed) ? '--seed must be an integer' : '',
    !(changeShare >= 0 && changeShare <= 1) ? '--change-share must be within 0..1' : '',
    dataset !== 'reimbursementGroup' && dataset !== 'treatmentGroup'
      ? '--dataset must be reimbursementGroup or treatmentGroup'
      : '',
    format !== 'json' && format !== 'ndjson' ? '--format must be json or ndjson' : '',
  ].filter(Boolean);
  if (problems.length > 0 || !values.out) {
    process.stderr.write(`${problems.join('\n')}\n${USAGE}\n`);
    return 2;
  }
  const items = syntheticItems(dataset as Dataset, count, { seed, changeShare });
  await writeItems(values.out, items, format as 'json' | 'ndjson');
  process.stdout.write(
    `wrote ${count} ${dataset} items (seed ${seed}, change share ${changeShare}) to ${values.out}\n`,
  );
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
