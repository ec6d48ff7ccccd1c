/**
 * Generates the shipped sample upstream files, deterministically:
 *
 *   npx tsx tools/refsync-sample-data/src/generate-sample.ts
 *
 * v1 is a realistic snapshot; v2 is the next night's snapshot with a few percent of additions,
 * changes and removals. Re-running rewrites identical files (a test checks that they match).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ReimbursementGroupData, TreatmentGroupData } from '@nhp/refsync-contracts';
import {
  codedConcept,
  legalBasis,
  medicine,
  randomVarenummer,
  reimbursementGroup,
  treatmentGroup,
} from './build';
import { CODE_SYSTEMS, CONDITIONS, SUBSTANCES } from './codes';
import { sampleDataPath, type SampleVersion } from './paths';
import { createRandom, type Random } from './random';
import { THERAPEUTIC_GROUPS } from './treatment-catalog';

export const SAMPLE_SEED = 20261122;
const EXAMPLE_VARENUMMER = '526181';

export interface SampleSnapshot {
  treatmentGroup: TreatmentGroupData[];
  reimbursementGroup: ReimbursementGroupData[];
}

/** What v2 did to v1, by id (for tests and demos). */
export interface SampleDelta {
  added: string[];
  changed: string[];
  removed: string[];
}

export interface SampleData {
  v1: SampleSnapshot;
  v2: SampleSnapshot;
  delta: { treatmentGroup: SampleDelta; reimbursementGroup: SampleDelta };
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const clone = <T>(value: T): T => structuredClone(value);

function uniqueVarenummer(random: Random, used: Set<string>): () => string {
  return () => {
    let value = randomVarenummer(random);
    while (used.has(value)) value = randomVarenummer(random);
    used.add(value);
    return value;
  };
}

function buildV1(random: Random, usedVarenummer: Set<string>): SampleSnapshot {
  const nextVarenummer = uniqueVarenummer(random, usedVarenummer);
  const reimbursementGroups: ReimbursementGroupData[] = [];
  for (const substance of SUBSTANCES) {
    const groups = 2 + (random.chance(0.4) ? 1 : 0) + (random.chance(0.1) ? 1 : 0);
    for (let n = 1; n <= groups; n += 1) {
      reimbursementGroups.push(reimbursementGroup(random, substance, n, { nextVarenummer }));
    }
  }
  // The decisions' example: group A10AE04_1 covering varenummer 526181 (reserved up front).
  const example = reimbursementGroups.find((g) => g.id === 'A10AE04_1');
  if (example && example.medicines.length > 0)
    example.medicines[0].identifier.value = EXAMPLE_VARENUMMER;

  const treatmentGroups = THERAPEUTIC_GROUPS.map((group) =>
    treatmentGroup(random, group, `TG-${group.atc}`),
  );
  return {
    treatmentGroup: treatmentGroups.sort(byId),
    reimbursementGroup: reimbursementGroups.sort(byId),
  };
}

/** Picks `count` distinct items, never one already taken. */
function pickDistinct<T extends { id: string }>(
  random: Random,
  items: T[],
  count: number,
  taken: Set<string>,
): T[] {
  const picked: T[] = [];
  while (picked.length < count) {
    const item = random.pick(items);
    if (taken.has(item.id)) continue;
    taken.add(item.id);
    picked.push(item);
  }
  return picked;
}

/** Realistic upstream edits, each of which really changes the data. */
const REIMBURSEMENT_EDITS: Array<
  (random: Random, group: ReimbursementGroupData, nextVarenummer: () => string) => void
> = [
  // A new package gets an article number.
  (random, group, next) => {
    const product = group.medicines[0]?.display?.split(',')[0] ?? 'Generisk legemiddel tab';
    group.medicines.push(medicine(random, product, next()));
  },
  // A package is withdrawn (or, for an empty group, the first one appears).
  (random, group, next) => {
    if (group.medicines.length > 0) group.medicines.pop();
    else group.medicines.push(medicine(random, 'Nytt generikum tab 10 mg', next()));
  },
  // The group moves to another paragraph.
  (_random, group) => {
    group.legalBasis = legalBasis(group.legalBasis.coding[0].code === '200' ? '301' : '200');
  },
  // An indication is added: another condition of the substance, else the ICD-10 twin of one listed.
  (_random, group) => {
    const listed = new Set(group.indications.map((i) => i.coding[0].code));
    const substance = SUBSTANCES.find((sub) => group.id.startsWith(`${sub.atc}_`));
    const keys = substance?.conditions ?? [];
    const fresh = keys.find((k) => !listed.has(CONDITIONS[k].icpc2[0]));
    const twin = keys.find(
      (k) => listed.has(CONDITIONS[k].icpc2[0]) && !listed.has(CONDITIONS[k].icd10[0]),
    );
    if (fresh) {
      const [code, display] = CONDITIONS[fresh].icpc2;
      group.indications.push(codedConcept(CODE_SYSTEMS.icpc2, code, display));
    } else if (twin) {
      const [code, display] = CONDITIONS[twin].icd10;
      group.indications.push(codedConcept(CODE_SYSTEMS.icd10, code, display));
    } else {
      group.indications.pop();
    }
  },
  // A display text is corrected upstream.
  (_random, group) => {
    const target = group.medicines.find((m) => m.display !== null);
    if (target) target.display = `${target.display} (endret pakning)`;
    else group.legalBasis = legalBasis(group.legalBasis.coding[0].code === '400' ? '500' : '400');
  },
];

function buildV2(
  random: Random,
  v1: SampleSnapshot,
  usedVarenummer: Set<string>,
): Omit<SampleData, 'v1'> {
  const nextVarenummer = uniqueVarenummer(random, usedVarenummer);

  // Reimbursement groups: about 2% removed, 3% changed, 2% added.
  const rg = v1.reimbursementGroup.map(clone);
  const touched = new Set<string>(['A10AE04_1']); // keep the documented example stable
  const rgRemoved = pickDistinct(random, rg, Math.round(rg.length * 0.02), touched).map(
    (g) => g.id,
  );
  const rgChanged = pickDistinct(random, rg, Math.round(rg.length * 0.03), touched);
  rgChanged.forEach((group, i) =>
    REIMBURSEMENT_EDITS[i % REIMBURSEMENT_EDITS.length](random, group, nextVarenummer),
  );
  const rgAdded: ReimbursementGroupData[] = [];
  const ids = new Set(rg.map((g) => g.id));
  while (rgAdded.length < Math.round(rg.length * 0.02)) {
    const substance = random.pick(SUBSTANCES);
    let n = 1;
    while (ids.has(`${substance.atc}_${n}`)) n += 1;
    const group = reimbursementGroup(random, substance, n, {
      nextVarenummer,
      emptyMedicinesShare: 0,
    });
    ids.add(group.id);
    rgAdded.push(group);
  }
  const removedRg = new Set(rgRemoved);
  const reimbursementGroups = [...rg.filter((g) => !removedRg.has(g.id)), ...rgAdded].sort(byId);

  // Treatment groups: one removed, three changed, two added.
  const tg = v1.treatmentGroup.map(clone);
  const tgTouched = new Set<string>();
  const tgRemoved = pickDistinct(random, tg, 1, tgTouched).map((g) => g.id);
  const tgChanged = pickDistinct(random, tg, 3, tgTouched);
  tgChanged[0]['name'] = `${tgChanged[0].name} (revidert)`;
  tgChanged[1]['validFrom'] = '2026-12-01';
  tgChanged[2]['description'] =
    `${String(tgChanged[2]['description'])} Oppdatert etter ny retningslinje.`;
  const tgAdded = [
    treatmentGroup(
      random,
      { atc: 'A10BX', name: 'Andre blodglukosesenkende midler', area: 'Endokrinologi' },
      'TG-A10BX',
    ),
    treatmentGroup(
      random,
      { atc: 'N02CD', name: 'CGRP-antagonister', area: 'Nevrologi' },
      'TG-N02CD',
    ),
  ];
  const removedTg = new Set(tgRemoved);
  const treatmentGroups = [...tg.filter((g) => !removedTg.has(g.id)), ...tgAdded].sort(byId);

  return {
    v2: { treatmentGroup: treatmentGroups, reimbursementGroup: reimbursementGroups },
    delta: {
      treatmentGroup: {
        added: tgAdded.map((g) => g.id),
        changed: tgChanged.map((g) => g.id),
        removed: tgRemoved,
      },
      reimbursementGroup: {
        added: rgAdded.map((g) => g.id),
        changed: rgChanged.map((g) => g.id),
        removed: rgRemoved,
      },
    },
  };
}

/** Builds both sample versions from the fixed seed; pure and deterministic. */
export function buildSampleData(seed = SAMPLE_SEED): SampleData {
  const used = new Set<string>([EXAMPLE_VARENUMMER]);
  const v1 = buildV1(createRandom(seed), used);
  const rest = buildV2(createRandom(seed + 1), v1, used);
  return { v1, ...rest };
}

/** The exact bytes of a shipped file: 2-space JSON, trailing newline. */
export function sampleFileContent(items: unknown[]): string {
  return `${JSON.stringify(items, null, 2)}\n`;
}

export async function writeSampleData(data: SampleData = buildSampleData()): Promise<string[]> {
  const written: string[] = [];
  for (const version of ['v1', 'v2'] as SampleVersion[]) {
    for (const dataset of ['treatmentGroup', 'reimbursementGroup'] as const) {
      const file = sampleDataPath(version, dataset);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, sampleFileContent(data[version][dataset]));
      written.push(file);
    }
  }
  return written;
}

if (require.main === module) {
  const data = buildSampleData();
  writeSampleData(data)
    .then((files) => {
      for (const file of files) process.stdout.write(`wrote ${file}\n`);
      process.stdout.write(`${JSON.stringify(data.delta, null, 2)}\n`);
    })
    .catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    });
}
